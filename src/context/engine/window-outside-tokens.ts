import type { ContextMessage } from '../../model/context-store.js';
import { isToolUIPart } from '../../model/context-ui-message.js';
import type { ContextMessageCache } from '../../model/context-store.js';
import { cachedPartKinds } from '../stages/cached-row.js';
import { validateStoredMessages } from '../stages/validate-stored-messages.js';

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
    const [stored] = validateStoredMessages({ messages: [messages[index]!], cache }).messages;
    if (!stored) continue;
    const { role, parts } = stored.message;
    if (stored.deletedAt != null || (stored.contextState ?? 'eligible') !== 'eligible') continue;
    if (typeof stored.tokenCount !== 'number' || stored.tokenCounterId !== countId) continue;
    if (role === 'user' && parts.some((part) => part.type === 'text' || part.type === 'file'))
      total += stored.tokenCount;
    if (role !== 'assistant' || !assistantStatuses.includes(stored.status)) continue;
    if (parts.some((part) => isToolUIPart(part) && (!settledToolStates.has(String(part.state)) || part.preliminary)))
      continue;
    const counts = stored.partTokenCounts;
    if (!counts || !counts.every((count) => Number.isSafeInteger(count) && count >= 0)) continue;
    if (counts.reduce((sum, count) => sum + count, 0) !== stored.tokenCount) continue;
    const kinds = cachedPartKinds(stored, cache);
    if (kinds.length !== counts.length) continue;
    kinds.forEach((kind, index) => {
      if (kind === 'text') total += counts[index]!;
    });
  }
  return total;
}
