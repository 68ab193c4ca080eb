import type { ContextMessage } from '../../model/context-store.js';
import { isToolUIPart, type ContextUIPart } from '../../model/context-ui-message.js';
import type { ContextMessageCache } from '../../model/context-store.js';
import { cachedPartKinds } from '../caches/cached-row.js';
import { validatedAsIs, validateStoredMessages } from '../stages/validate-stored-messages.js';

/** Tool states the filter leaves as they are in an older turn (it closes every other one, and recounts). */
const settledToolStates = new Set(['output-available', 'output-error', 'output-denied']);

/**
 * The least the stored messages a window leaves out (older, not pinned) add to the context's estimate, pruned or
 * not: counted only from stored counts the engine uses as they are (its counter's), never from an estimate — a user
 * message's count, an assistant message's text parts by its per-part counts (the parts pruning never removes,
 * {@link modelPartKinds}). A message the validation or the filter would change or leave out adds 0. The stages add
 * it to the window's estimate where they compare the whole context with the budget, so that a window over the
 * budget only with it decides as the whole thread does; it must never exceed what the whole thread adds (above
 * `limit`, only that it is above matters).
 */
export function windowOutsideTokens({
  messages,
  countId,
  assistantStatuses,
  limit,
  cache,
}: {
  /** The messages left out, oldest first. */
  messages: readonly ContextMessage[];
  /** The `tokenCounterId` of counts the engine uses as they are. */
  countId: string;
  /** The assistant statuses that reach the model. */
  assistantStatuses: readonly string[];
  /** Counting stops once the total exceeds it: the most input the model takes (no budget is above it). */
  limit: number;
  /** The store's cache (validation and part kinds kept per row). @default none */
  cache?: ContextMessageCache;
}): number {
  let total = 0;
  // Newest first, and only until `limit`: a comparison with a budget below it is decided by then.
  for (let index = messages.length - 1; index >= 0 && total <= limit; index--) {
    const row = messages[index]!;
    const stored = validatedAsIs(row, cache) ? row : validateStoredMessages({ messages: [row], cache }).messages[0];
    if (!stored) continue;
    const { role, parts } = stored.message;
    if (stored.deletedAt != null || (stored.contextState ?? 'eligible') !== 'eligible') continue;
    if (typeof stored.tokenCount !== 'number' || stored.tokenCounterId !== countId) continue;
    if (role === 'user' && parts.some((part) => part.type === 'text' || part.type === 'file'))
      total += stored.tokenCount;
    if (role !== 'assistant' || !assistantStatuses.includes(stored.status) || !settled(parts)) continue;
    const counts = stored.partTokenCounts;
    const sum = counts ? sumOfCounts(counts) : -1;
    if (!counts || sum < 0 || sum !== stored.tokenCount) continue;
    const kinds = cachedPartKinds(stored, cache);
    if (kinds.length !== counts.length) continue;
    for (let part = 0; part < kinds.length; part++) if (kinds[part] === 'text') total += counts[part]!;
  }
  return total;
}

// Whether every tool part is in a state the filter leaves as it is.
function settled(parts: readonly ContextUIPart[]): boolean {
  for (const part of parts)
    if (isToolUIPart(part) && (!settledToolStates.has(String(part.state)) || part.preliminary)) return false;
  return true;
}

// The sum of the per-part counts, or -1 when one is not a count.
function sumOfCounts(counts: readonly number[]): number {
  let sum = 0;
  for (const count of counts) {
    if (!Number.isSafeInteger(count) || count < 0) return -1;
    sum += count;
  }
  return sum;
}
