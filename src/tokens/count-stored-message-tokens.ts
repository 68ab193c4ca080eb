import type { ContextUIMessage } from '../model/context-ui-message.js';
import { convertUIMessageToModelMessages } from './convert-ui-message.js';
import { countModelMessageTokens } from './count-message-tokens.js';
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
 * converts to (see {@link countModelMessageTokens}), without factors, overheads, images or files (the model
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
  let total = 0;
  for (const modelMessage of convertUIMessageToModelMessages(message))
    total += countModelMessageTokens(modelMessage, tokenCounter).text;
  return total;
}
