import type { ContextMessage } from '../../model/context-store.js';
import { isToolUIPart, type ContextUIPart } from '../../model/context-ui-message.js';
import type { ContextMessageCache } from '../../model/context-store.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ModelPartKind } from '../../tokens/model-part-kinds.js';
import { storedTokenCountId } from '../../tokens/count-stored-message-tokens.js';
import { cachedPartKinds } from '../caches/cached-row.js';
import { validatedAsIs, validateStoredMessages } from '../stages/validate-stored-messages.js';

/** Tool states the filter leaves as they are in an older turn (it closes every other one, and recounts). */
const settledToolStates = new Set(['output-available', 'output-error', 'output-denied']);

/** What the turns a window leaves out add to the context's estimate: at least `least`, at most `most`. */
export interface WindowOutsideTokens {
  /**
   * The least they add, pruned or not: counted only from stored counts the engine uses as they are (its counter's),
   * never from an estimate — a user message's count, an assistant message's text parts by its per-part counts (the
   * parts pruning never removes). A message the validation or the filter would change or leave out adds 0.
   */
  least: number;
  /**
   * The most they add once the whole thread's pruning has reached the window (every prunable call older than it
   * pruned): each message's count less its tool parts' (unless tool traffic is never pruned), priced as the
   * estimate prices it at its most (every other part a file, two framed messages per part). Infinite when a
   * message has no count the engine uses, keeps tool parts it has no per-part counts of, or shares a tool call id
   * with the window.
   */
  most: number;
}

/**
 * Bounds of what the stored messages a window leaves out (older, not pinned) add to the context's estimate. The
 * stages add `least` where they compare the whole context with the budget, so that a window over the budget only
 * with it decides as the whole thread does (it must never exceed what the whole thread adds); where a decision
 * turns on the exact amount (how much tool traffic to prune), they decide with both, and the window holds only when
 * the two agree. Above `limit`, only that a bound is above matters.
 */
export function windowOutsideTokens({
  messages,
  measure,
  assistantStatuses,
  limit,
  pruneToolTraffic,
  windowToolCallIds,
  cache,
}: {
  /** The messages left out, oldest first. */
  messages: readonly ContextMessage[];
  /** Prices the counts; its counter's counts are the ones the engine uses as they are. */
  measure: ContextMeasure;
  /** The assistant statuses that reach the model. */
  assistantStatuses: readonly string[];
  /** Counting stops once both bounds exceed it: the most input the model takes (no budget is above it). */
  limit: number;
  /** Whether the pruning may remove old tool traffic (the policy's `toolTraffic` is not `'none'`). */
  pruneToolTraffic: boolean;
  /** The tool call ids the window's messages hold. */
  windowToolCallIds: ReadonlySet<string>;
  /** The store's cache (validation and part kinds kept per row). @default none */
  cache?: ContextMessageCache;
}): WindowOutsideTokens {
  const countId = storedTokenCountId(measure.tokenCounter);
  let least = 0;
  let most = 0;
  // Newest first, and only until `limit`: a comparison with a budget below it is decided by then.
  for (let index = messages.length - 1; index >= 0 && (least <= limit || most <= limit); index--) {
    const row = messages[index]!;
    const stored = validatedAsIs(row, cache) ? row : validateStoredMessages({ messages: [row], cache }).messages[0];
    if (!stored) continue;
    const { role } = stored.message;
    if (stored.deletedAt != null || (stored.contextState ?? 'eligible') !== 'eligible' || role === 'system') continue;
    if (role === 'assistant' && !assistantStatuses.includes(stored.status)) continue;
    const counted = typeof stored.tokenCount === 'number' && stored.tokenCounterId === countId;
    const kinds = counted ? cachedPartKinds(stored, cache) : [];
    const counts = counted ? partCounts(stored, kinds) : undefined;
    if (counted) least += leastTokens(stored, kinds, counts);
    if (most <= limit)
      most += counted ? mostTokens({ stored, kinds, counts, measure, pruneToolTraffic, windowToolCallIds }) : Infinity;
  }
  return { least, most };
}

// What the filter leaves of the row at least (its count, or its text parts' counts).
function leastTokens(stored: ContextMessage, kinds: readonly ModelPartKind[], counts: readonly number[] | undefined) {
  const { role, parts } = stored.message;
  if (role === 'user')
    return parts.some((part) => part.type === 'text' || part.type === 'file') ? stored.tokenCount! : 0;
  if (!counts || !settled(parts)) return 0;
  let total = 0;
  for (let part = 0; part < kinds.length; part++) if (kinds[part] === 'text') total += counts[part]!;
  return total;
}

// What the row adds at most once its tool traffic is pruned, as the estimate prices it.
function mostTokens({
  stored,
  kinds,
  counts,
  measure,
  pruneToolTraffic,
  windowToolCallIds,
}: {
  stored: ContextMessage;
  kinds: readonly ModelPartKind[];
  counts: readonly number[] | undefined;
  measure: ContextMeasure;
  pruneToolTraffic: boolean;
  windowToolCallIds: ReadonlySet<string>;
}): number {
  const { parts } = stored.message;
  let text = 0;
  let files = 0;
  let tools = false;
  for (let part = 0; part < kinds.length; part++) {
    const kind = kinds[part]!;
    tools ||= kind === 'tool';
    if (kind === 'other' || kind === 'reasoning') files += 1;
    if (counts && !(pruneToolTraffic && kind === 'tool')) text += counts[part]!;
  }
  // A tool part kept may hold images; one the window shares is pruned with the window's traffic. One the filter
  // closes (unfinished in an older turn) changes only tool parts, which are pruned: the other parts' counts hold.
  if (tools && (!pruneToolTraffic || !counts)) return Infinity;
  if (parts.some((part) => isToolUIPart(part) && windowToolCallIds.has(String(part.toolCallId)))) return Infinity;
  // Model messages: each part opens at most two (a step's assistant and tool messages, a closed call's; a steering
  // message one, even empty), and with `emptyMessages: 'keep'` every one stays, framed, once pruned.
  const messages = 2 * parts.length + 1;
  const tally = { text: counts ? text : stored.tokenCount!, images: files, files, messages };
  // One more token a model message: each segment's estimate is rounded up on its own.
  return measure.estimate(tally) + messages;
}

// The per-part counts when they add up to the count and match the parts, else undefined.
function partCounts(stored: ContextMessage, kinds: readonly ModelPartKind[]): readonly number[] | undefined {
  const counts = stored.partTokenCounts;
  if (!counts || counts.length !== kinds.length) return undefined;
  let sum = 0;
  for (const count of counts) {
    if (!Number.isSafeInteger(count) || count < 0) return undefined;
    sum += count;
  }
  return sum === stored.tokenCount ? counts : undefined;
}

// Whether every tool part is in a state the filter leaves as it is.
function settled(parts: readonly ContextUIPart[]): boolean {
  for (const part of parts)
    if (isToolUIPart(part) && (!settledToolStates.has(String(part.state)) || part.preliminary)) return false;
  return true;
}
