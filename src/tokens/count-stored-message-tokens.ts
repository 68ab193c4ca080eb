import type { ContextUIMessage } from '../model/context-ui-message.js';
import { convertUIMessageToModelMessages } from './convert-ui-message.js';
import { countModelPartTokens } from './count-message-tokens.js';
import type { TokenCounter } from './token-counter.js';

/** The serialisation version of {@link countStoredMessageTokens}; part of {@link storedTokenCountId}. */
const STORED_COUNT_VERSION = 'model-messages-v2';

/**
 * The `tokenCounterId` to store beside a count made by {@link countStoredMessageTokens} with `tokenCounter`.
 * The engine uses a stored count only when the ids match, so changing the tokenizer or the serialisation
 * makes old counts be recounted rather than trusted.
 */
export function storedTokenCountId(tokenCounter: TokenCounter): string {
  return `${tokenCounter.id}/${STORED_COUNT_VERSION}`;
}

/**
 * The raw token count to store with a message when it is written: the text tokens of the model messages it
 * converts to (the sum of {@link countStoredPartTokens}), without factors, overheads, images or files (the model
 * profile prices those when the budget is computed, so a thread can switch models without a recount).
 *
 * @example
 * const counter = await loadO200kTokenCounter();
 * await store.append({ message, tokenCount: countStoredMessageTokens({ message, tokenCounter: counter }), tokenCounterId: storedTokenCountId(counter) });
 */
export function countStoredMessageTokens({
  message,
  tokenCounter,
}: {
  message: ContextUIMessage;
  tokenCounter: TokenCounter;
}): number {
  // The sum of the part counts by construction, so a stored count and its stored part counts always agree.
  let total = 0;
  for (const count of countStoredPartTokens({ message, tokenCounter })) total += count;
  return total;
}

/**
 * The text tokens of each part of the model messages a stored message converts to, in order (a string content is
 * one entry): what {@link countStoredMessageTokens} sums. Stored beside the count (`partTokenCounts`), they let the
 * context engine prune a loaded message (remove its reasoning or tool traffic) by subtracting, without tokenizing.
 *
 * @example
 * const counter = await loadO200kTokenCounter();
 * countStoredPartTokens({ message: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hello, world' }] }, tokenCounter: counter }); // [4]
 */
export function countStoredPartTokens({
  message,
  tokenCounter,
}: {
  message: ContextUIMessage;
  tokenCounter: TokenCounter;
}): number[] {
  const counts: number[] = [];
  for (const modelMessage of convertUIMessageToModelMessages(message)) {
    if (typeof modelMessage.content === 'string') counts.push(tokenCounter.count(modelMessage.content));
    else for (const part of modelMessage.content) counts.push(countModelPartTokens(part, tokenCounter).text);
  }
  return counts;
}
