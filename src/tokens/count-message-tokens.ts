import type { ModelMessage } from 'ai';
import { memoOfCounter, type TokenCounter } from './token-counter.js';

/**
 * The raw size of one or more model messages: o200k text tokens, plus images and files (priced by the
 * model profile when the budget is computed), plus how many messages carry per-message framing.
 */
export interface TokenTally {
  /** Raw text tokens: text, reasoning, tool names, JSON inputs and outputs. */
  text: number;
  /** Image parts (including images inside tool results). */
  images: number;
  /** Other file parts (PDF, audio, …). */
  files: number;
  /** Model messages, each charged the profile's per-message framing. */
  messages: number;
}

/** A tally of nothing. */
export const emptyTokenTally: TokenTally = Object.freeze({ text: 0, images: 0, files: 0, messages: 0 });

/** Adds tallies. */
export function addTokenTallies(...tallies: TokenTally[]): TokenTally {
  const sum = { text: 0, images: 0, files: 0, messages: 0 };
  for (const tally of tallies) {
    sum.text += tally.text;
    sum.images += tally.images;
    sum.files += tally.files;
    sum.messages += tally.messages;
  }
  return sum;
}

/** What providers send for an `execution-denied` result without a reason. */
const DENIED_WITHOUT_REASON = 'Tool call execution denied.';

const messageMemo = new Map<string, WeakMap<object, TokenTally>>();
const jsonMemo = new Map<string, WeakMap<object, number>>();

/**
 * Counts one model message the way the budget reads it: text and reasoning as their text; a tool call as its
 * name plus its JSON input; a tool result as its name plus its output as providers send it (text, JSON, an error
 * as `{"error":…}`, the denial reason or "Tool call execution denied.", or each item of `content`); images and
 * other files by count, a text file (inline in any data form) by its text; approvals, custom and unknown parts
 * as their whole JSON (with `type`). Provider options
 * are not sent as content and are not counted. The result is memoised per message object, so a message the
 * engine has seen is never tokenized again.
 */
export function countModelMessageTokens(message: ModelMessage, tokenCounter: TokenCounter): TokenTally {
  const memo = messageTallyMemo(tokenCounter);
  const cached = memo.get(message);
  if (cached) return cached;
  const seeded = typeof message.content === 'string' ? undefined : sumSeededParts(message.content, tokenCounter);
  if (seeded) {
    memo.set(message, seeded);
    return seeded;
  }
  const tally = { text: 0, images: 0, files: 0, messages: 1 };
  const { content } = message;
  if (typeof content === 'string') {
    tally.text += tokenCounter.count(content);
  } else {
    for (const part of content as ReadonlyArray<{ type: string; [key: string]: unknown }>)
      countPart(part, tally, tokenCounter);
  }
  const frozen = Object.freeze(tally);
  memo.set(message, frozen);
  return frozen;
}

// The tally of a message whose parts were all seeded from stored counts (`seedPartTokenCounts`), or undefined.
function sumSeededParts(parts: readonly object[], tokenCounter: TokenCounter): TokenTally | undefined {
  if (parts.length === 0) return undefined;
  const memo = partTallyMemo(tokenCounter);
  const tally = { text: 0, images: 0, files: 0, messages: 1 };
  for (const part of parts) {
    const known = memo.get(part);
    if (!known) return undefined;
    tally.text += known.text;
    tally.images += known.images;
    tally.files += known.files;
  }
  return Object.freeze(tally);
}

const partMemo = new Map<string, WeakMap<object, TokenTally>>();

/** The memo of {@link countModelMessageTokens} for a counter (seeded from stored counts by `seedPartTokenCounts`). */
export function messageTallyMemo(tokenCounter: TokenCounter): WeakMap<object, TokenTally> {
  return memoOfCounter(messageMemo, tokenCounter);
}

/** The memo of {@link countModelPartTokens} for a counter (seeded from stored counts by `seedPartTokenCounts`). */
export function partTallyMemo(tokenCounter: TokenCounter): WeakMap<object, TokenTally> {
  return memoOfCounter(partMemo, tokenCounter);
}

/**
 * The raw tally of one content part as {@link countModelMessageTokens} counts it (no per-message framing: `messages`
 * is 0), memoised per part object. A message's tally is the sum of its parts' plus one message, so removing a part
 * from a counted (or stored) tally is subtracting this.
 */
export function countModelPartTokens(part: object, tokenCounter: TokenCounter): TokenTally {
  const memo = partTallyMemo(tokenCounter);
  const cached = memo.get(part);
  if (cached) return cached;
  const tally = { text: 0, images: 0, files: 0, messages: 0 };
  countPart(part as { type: string; [key: string]: unknown }, tally, tokenCounter);
  const frozen = Object.freeze(tally);
  memo.set(part, frozen);
  return frozen;
}

/** Sums {@link countModelMessageTokens} over messages. */
export function countModelMessagesTokens(messages: readonly ModelMessage[], tokenCounter: TokenCounter): TokenTally {
  return addTokenTallies(...messages.map((message) => countModelMessageTokens(message, tokenCounter)));
}

function countPart(part: { type: string; [key: string]: unknown }, tally: TokenTally, counter: TokenCounter): void {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      tally.text += counter.count(String(part.text ?? ''));
      return;
    case 'tool-call':
      tally.text += counter.count(String(part.toolName ?? '')) + countJson(part.input ?? {}, counter);
      return;
    case 'tool-result':
      tally.text += counter.count(String(part.toolName ?? ''));
      countToolOutput(part.output as { type: string; [key: string]: unknown } | undefined, tally, counter);
      return;
    case 'file':
    case 'image':
    case 'reasoning-file':
      countFile(part, tally, counter);
      return;
    default: {
      const { providerOptions: _providerOptions, ...rest } = part;
      tally.text += countJson(rest, counter);
    }
  }
}

function countToolOutput(
  output: { type: string; [key: string]: unknown } | undefined,
  tally: TokenTally,
  counter: TokenCounter,
): void {
  if (!output) return;
  switch (output.type) {
    case 'text':
      tally.text += counter.count(String(output.value ?? ''));
      return;
    case 'json':
      tally.text += countJson(output.value, counter);
      return;
    case 'error-text':
    case 'error-json':
      // Providers send an error as `{"error":…}` (OpenAI's converters).
      tally.text += counter.count(JSON.stringify({ error: output.value ?? null }));
      return;
    case 'execution-denied':
      tally.text += counter.count(String(output.reason ?? DENIED_WITHOUT_REASON));
      return;
    case 'content':
      for (const item of (output.value as Array<{ type: string; [key: string]: unknown }>) ?? []) {
        if (item.type === 'text') tally.text += counter.count(String(item.text ?? ''));
        else if ('mediaType' in item || item.type.startsWith('image') || item.type.startsWith('file'))
          countFile(item, tally, counter);
        else {
          const { providerOptions: _providerOptions, ...rest } = item;
          tally.text += countJson(rest, counter);
        }
      }
      return;
    default:
      tally.text += countJson(output, counter);
  }
}

function countFile(part: { type: string; [key: string]: unknown }, tally: TokenTally, counter: TokenCounter): void {
  const text = fileText(part);
  if (text !== undefined) tally.text += counter.count(text);
  else if (isImage(part)) tally.images += 1;
  else tally.files += 1;
}

/**
 * The text of a file sent inline as text: `{ type: 'text' }` data, or a `text/*` or JSON file whose data is in
 * the request (bytes, base64, `{ type: 'data' }`, a `data:` URL). Undefined for remote and provider files.
 */
export function fileText(part: { type: string; [key: string]: unknown }): string | undefined {
  const data = part.data as unknown;
  if (typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'text') {
    return String((data as { text?: unknown }).text ?? '');
  }
  if (!/^text\/|^application\/json/.test(String(part.mediaType ?? ''))) return undefined;
  return inlineText(data);
}

function inlineText(data: unknown): string | undefined {
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  if (data instanceof URL) return inlineText(data.href);
  if (typeof data === 'string') {
    if (data.startsWith('data:')) {
      const comma = data.indexOf(',');
      const body = data.slice(comma + 1);
      try {
        return data.slice(0, comma).endsWith(';base64')
          ? Buffer.from(body, 'base64').toString('utf8')
          : decodeURIComponent(body);
      } catch {
        return body;
      }
    }
    // A URL string is fetched by the provider; any other string is base64 content.
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(data) ? undefined : Buffer.from(data, 'base64').toString('utf8');
  }
  if (typeof data === 'object' && data !== null) {
    const file = data as { type?: unknown; data?: unknown; url?: unknown };
    if (file.type === 'data') return inlineText(file.data);
    if (file.type === 'url') return inlineText(file.url);
  }
  return undefined;
}

function isImage(part: { type: string; [key: string]: unknown }): boolean {
  return part.type.startsWith('image') || String(part.mediaType ?? '').startsWith('image/');
}

function countJson(value: unknown, counter: TokenCounter): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return counter.count(JSON.stringify(value));
  if (typeof value !== 'object' || value === null) return counter.count(String(value));
  const memo = memoOfCounter(jsonMemo, counter);
  const cached = memo.get(value);
  if (cached !== undefined) return cached;
  const tokens = counter.count(JSON.stringify(value) ?? '');
  memo.set(value, tokens);
  return tokens;
}
