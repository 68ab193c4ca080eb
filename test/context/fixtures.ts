import type { ModelMessage } from 'ai';
import { withoutContextMessageRef } from '../../src/context/segments/context-message-ref.js';
import {
  countStoredMessageTokens,
  resolveModelProfile,
  storedTokenCountId,
  type ModelProfile,
} from '../../src/context/index.js';
import { createContextMeasure } from '../../src/tokens/context-measure.js';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import type { ContextUIMessage, ContextUIPart } from '../../src/model/context-ui-message.js';
import type { ContextMessage } from '../../src/model/context-store.js';
import { createMemoryContextStore, type MemoryContextStore } from '../../src/testing/index.js';
import { text as sharedText, userMessage } from '../support/fixtures.js';

/** The default counter, loaded once per test file. */
export const tokenCounter = await loadO200kTokenCounter();

/** A small OpenAI-family profile: factor 1, 4 tokens per message, 3 % margin. */
export function smallProfile(contextWindow = 4000, maxOutputTokens = 500): ModelProfile {
  return resolveModelProfile({ modelId: 'gpt-4o', overrides: { contextWindow, maxOutputTokens } });
}

/** A measure over {@link smallProfile}. */
export function smallMeasure(contextWindow = 4000) {
  return createContextMeasure({ tokenCounter, profile: smallProfile(contextWindow) });
}

/** A user message with one text part ({@link userMessage}, typed as the engine's message). */
export const user: (id: string, text: string) => ContextUIMessage = userMessage;

export const assistant = (id: string, ...parts: ContextUIPart[]): ContextUIMessage => ({
  id,
  role: 'assistant',
  parts,
});

/** A text part ({@link sharedText}, typed as the engine's part). */
export const text: (value: string) => ContextUIPart = sharedText;

export const reasoning = (value: string): ContextUIPart => ({ type: 'reasoning', text: value });

export const stepStart: ContextUIPart = { type: 'step-start' };

/** A finished `tool-${name}` part. */
export const toolResult = (name: string, toolCallId: string, input: unknown, output: unknown): ContextUIPart => ({
  type: `tool-${name}`,
  toolCallId,
  state: 'output-available',
  input,
  output,
});

/** A stored row with defaults (completed, eligible, no stored count). */
export function stored(
  sequence: number,
  message: ContextUIMessage,
  extra: Partial<ContextMessage> = {},
): ContextMessage {
  return {
    sequence,
    message,
    status: 'completed',
    contextState: 'eligible',
    pinned: false,
    tokenCount: null,
    tokenCounterId: null,
    deletedAt: null,
    ...extra,
  };
}

/** Stored rows 1, 2, 3… for the messages. */
export function storedAll(messages: readonly ContextUIMessage[]): ContextMessage[] {
  return messages.map((message, index) => stored(index + 1, message));
}

/** A memory store holding the messages with stored token counts (as a store writes them). */
export function storeOf(
  messages: readonly ContextUIMessage[],
  extra: (index: number) => Partial<ContextMessage> = () => ({}),
): MemoryContextStore {
  const store = createMemoryContextStore();
  messages.forEach((message, index) => {
    const { status, contextState, pinned } = extra(index);
    store.appendMessage({
      message,
      status,
      contextState,
      pinned,
      tokenCount: countStoredMessageTokens({ message, tokenCounter }),
      tokenCounterId: storedTokenCountId(tokenCounter),
    });
  });
  return store;
}

/** `count` words of filler, about one token each. */
export function words(count: number, word = 'word'): string {
  return Array.from({ length: count }, () => word).join(' ');
}

/** Messages (or one message) without the reference the engine puts on what it built from the store. */
export function unref<VALUE extends ModelMessage | readonly ModelMessage[] | undefined>(value: VALUE): VALUE {
  if (value === undefined) return value;
  return (
    Array.isArray(value) ? value.map(withoutContextMessageRef) : withoutContextMessageRef(value as ModelMessage)
  ) as VALUE;
}
