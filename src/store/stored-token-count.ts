import { countStoredPartTokens, storedTokenCountId } from '../tokens/count-stored-message-tokens.js';
import { countWithoutBlocking } from '../tokens/count-without-blocking.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { ContextUIMessage } from '../model/context-ui-message.js';
import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import type { StoreContext } from './store-context.js';
import type { TokenCounter } from '../tokens/token-counter.js';

/**
 * Messages whose parts' JSON is shorter are counted in one go: at the slowest o200k rate measured (random text of
 * one script, about 1 s per MB) that holds the event loop for at most about 16 ms.
 */
const COUNT_AT_ONCE_BELOW_BYTES = 16_384;

/** The longest counter id stored (the column is text; the id is compared, never searched). */
const MAX_COUNTER_ID_LENGTH = 200;

/** The counts {@link storedTokenCount} gives a message, as they are written together. */
export interface StoredTokenCount {
  /** The message's raw count. */
  tokenCount: number;
  /** The counter and serialisation that made it. */
  tokenCounterId: string;
  /** The count of each part (`countStoredPartTokens`), summing to `tokenCount`; null when they are not integers. */
  partTokenCounts: number[] | null;
}

/**
 * The token counts stored with a message at write time: exactly what the context engine would count for it (its
 * model messages' text, no factors), with the engine's counter id, so the engine sums stored counts instead of
 * re-tokenizing the thread on every step, and the count of each part, so that pruning a part subtracts it. The parts
 * are tokenized once, through `countAsync` when the counter has it (a long message does not stall other requests):
 * the message's count is their sum. An estimating counter's fractional total is stored rounded
 * up (the column holds integers) and its part counts as null (they would not sum to it); a count that is not a
 * finite number ≥ 0, or a counter id that is not short text, is an {@link InvalidArgumentError} naming it, before
 * anything is written.
 */
export async function storedTokenCount(
  context: StoreContext,
  message: { id: string; role: 'system' | 'user' | 'assistant'; parts: StoredMessagePart[]; byteSize?: number },
): Promise<StoredTokenCount> {
  const tokenCounter = await context.tokenCounter;
  const countParts = (counter: TokenCounter) =>
    countStoredPartTokens({ message: message as ContextUIMessage, tokenCounter: counter });
  // A short message is counted at once (a few milliseconds at worst): the gathering pass would only add work.
  const parts =
    message.byteSize !== undefined && message.byteSize < COUNT_AT_ONCE_BELOW_BYTES
      ? countParts(tokenCounter)
      : await countWithoutBlocking(tokenCounter, countParts);
  let counted = 0;
  for (const part of parts) counted += part;
  const tokenCount = Math.ceil(counted);
  if (typeof counted !== 'number' || !Number.isFinite(counted) || counted < 0 || tokenCount > 2_147_483_647) {
    throw new InvalidArgumentError({
      argument: 'tokenCounter.count',
      value: counted,
      message: `expected a finite number of tokens ≥ 0 (message ${message.id}, counter ${String(tokenCounter.id)}).`,
    });
  }
  const id = (tokenCounter as { id: unknown }).id;
  if (typeof id !== 'string' || id.length > MAX_COUNTER_ID_LENGTH || id.includes('\u0000') || !id.isWellFormed()) {
    throw new InvalidArgumentError({
      argument: 'tokenCounter.id',
      value: id,
      message: `expected a string of at most ${MAX_COUNTER_ID_LENGTH} characters, without NUL or lone surrogates.`,
    });
  }
  const exact = counted === tokenCount && parts.every((part) => Number.isSafeInteger(part) && part >= 0);
  return { tokenCount, tokenCounterId: storedTokenCountId(tokenCounter), partTokenCounts: exact ? parts : null };
}
