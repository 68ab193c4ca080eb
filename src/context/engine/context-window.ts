import type { ContextMessage, ContextMessageCache } from '../../model/context-store.js';
import { groupTurns, messageToolIds, type ContextSegment } from '../segments/context-segment.js';
import { cachedPartKinds } from '../caches/cached-row.js';
import type { ContextPolicy, ContextPrunePolicy } from '../contracts/context-policy.js';
import type { ContextStageReports } from './run-context-stages.js';

/**
 * How much of a long thread a compaction starts from: the newest turns, from a user message, down to the first one
 * the selection would set aside by an estimate from the stored counts ({@link findWindowStart}), plus every older
 * pinned message. The older turns are set aside whole, unconverted: the selection would not keep them
 * ({@link windowHeld} checks that it did not, else the compaction runs again over the whole thread).
 */
export interface ContextWindowSize {
  /**
   * The most the model's input may hold (raw tokens are never priced below it): the whole thread, pruned, must
   * exceed it for a window to be taken (else the selection sets nothing aside).
   */
  inputTokens: number;
  /** The share of the budget the selection keeps (`policy.summary.targetRatio`). */
  targetRatio: number;
  /** Turns to take at least. */
  minimumTurns: number;
  /** Turns to take after the first one estimated to be set aside. */
  marginTurns: number;
  /** What the pruning removes from turns older than the protected ones. */
  prune: Pick<ContextPrunePolicy, 'reasoning' | 'reasoningTurns' | 'toolTraffic' | 'toolTrafficTurns'>;
  /** The smallest preview: the least a kept part is shrunk to by the selection. */
  previewTokens: number;
  /** The assistant statuses that reach the model. */
  assistantStatuses: readonly string[];
}

/**
 * The index in `candidates` (sorted by sequence) where the window starts; 0 (the whole thread) when there is no
 * such message. From the newest turn, each turn's size once pruned and once shrunk ({@link prunedTokenEstimate})
 * is taken as the selection takes it (whole while it fits `inputTokens × targetRatio`, else shrunk while that
 * fits); the window starts at the user message of the first turn that fits neither, once it holds `minimumTurns`
 * turns, and `marginTurns` turns older. The whole thread must hold more than `inputTokens` pruned (the selection
 * sets nothing aside from a context that fits). The estimates are below what the stages count: the window errs
 * large. The store's `cache` keeps each row's part kinds between requests.
 */
export function findWindowStart(
  candidates: readonly ContextMessage[],
  size: ContextWindowSize,
  cache?: ContextMessageCache,
): number {
  const target = size.inputTokens * size.targetRatio;
  let total = 0;
  let kept = 0;
  let turns = 0;
  let turn = { pruned: 0, shrunk: 0 };
  let margin = -1;
  let start = 0;
  // One estimate object for every row (read at once).
  const scratch = { pruned: 0, shrunk: 0 };
  for (let index = candidates.length - 1; index > 0; index--) {
    const stored = candidates[index];
    if (typeof stored?.message !== 'object' || stored.message === null) return 0;
    const estimate = prunedTokenEstimate(stored, turns, size, cache, scratch);
    total += estimate.pruned;
    if (start > 0) {
      if (total > size.inputTokens) return start;
      continue;
    }
    const pinned = stored.pinned === true;
    turn.pruned += pinned ? 0 : estimate.pruned;
    turn.shrunk += pinned ? 0 : estimate.shrunk;
    if (pinned) kept += estimate.pruned;
    if (stored.message.role !== 'user') continue;
    turns += 1;
    // The newest turn is kept, shrunk first when it does not fit (down to its user message, never shrunk).
    if (turns === 1) kept += kept + turn.pruned <= target ? turn.pruned : pinned ? 0 : estimate.pruned;
    else if (margin < 0 && kept + turn.pruned <= target) kept += turn.pruned;
    else if (margin < 0 && kept + turn.shrunk <= target) kept += turn.shrunk;
    else margin += 1;
    if (margin >= size.marginTurns && turns >= size.minimumTurns) start = index;
    turn = { pruned: 0, shrunk: 0 };
  }
  return total > size.inputTokens ? start : 0;
}

/**
 * Raw tokens a stored message keeps at least once pruned (`pruned`) and once shrunk by the selection as well
 * (`shrunk`: each part kept at most at the smallest preview), from its stored counts and without converting it.
 * With per-part counts, the parts pruning keeps ({@link modelPartKinds}) when the message is in a turn (`turn` 0 is
 * the newest) older than the protected ones (reasoning and tool traffic are removed, as if the tool traffic were
 * pruned; pinned messages are never pruned); without, a quarter of its texts' characters (below the count for
 * most texts). 0 for a message that does not reach the model or has no stored count. Underestimating only makes
 * the window larger. The part kinds are kept in the store's `cache` when given; the result is written to `into`.
 */
export function prunedTokenEstimate(
  stored: ContextMessage,
  turn: number,
  size: Pick<ContextWindowSize, 'prune' | 'assistantStatuses' | 'previewTokens'>,
  cache?: ContextMessageCache,
  into: { pruned: number; shrunk: number } = { pruned: 0, shrunk: 0 },
): { pruned: number; shrunk: number } {
  const reaches =
    stored.deletedAt == null &&
    (stored.contextState ?? 'eligible') === 'eligible' &&
    stored.message.role !== 'system' &&
    (stored.message.role !== 'assistant' || size.assistantStatuses.includes(stored.status));
  if (!reaches || typeof stored.tokenCount !== 'number' || !Array.isArray(stored.message.parts))
    return written(into, 0, 0);
  const { prune } = size;
  const keepReasoning =
    stored.pinned === true || prune.reasoning === 'none' || (prune.reasoning !== 'all' && turn < prune.reasoningTurns);
  const keepTools = stored.pinned === true || prune.toolTraffic === 'none' || turn < prune.toolTrafficTurns;
  const counts = stored.partTokenCounts;
  const kinds = counts ? cachedPartKinds(stored, cache) : [];
  if (counts && kinds.length === counts.length) {
    let pruned = 0;
    let shrunk = 0;
    for (let index = 0; index < kinds.length; index++) {
      const kind = kinds[index]!;
      if (
        kind === 'text' ||
        kind === 'other' ||
        (kind === 'reasoning' && keepReasoning) ||
        (kind === 'tool' && keepTools)
      ) {
        pruned += counts[index]!;
        if (kind !== 'reasoning') shrunk += Math.min(counts[index]!, size.previewTokens);
      }
    }
    return written(into, Math.min(pruned, stored.tokenCount), Math.min(shrunk, stored.tokenCount));
  }
  if (stored.message.role === 'user' || (keepReasoning && keepTools))
    return written(into, stored.tokenCount, Math.min(stored.tokenCount, size.previewTokens));
  let characters = 0;
  for (const part of stored.message.parts) if (part.type === 'text') characters += String(part.text ?? '').length;
  const pruned = Math.min(stored.tokenCount, Math.floor(characters / 4));
  return written(into, pruned, Math.min(pruned, size.previewTokens));
}

function written(
  into: { pruned: number; shrunk: number },
  pruned: number,
  shrunk: number,
): { pruned: number; shrunk: number } {
  into.pruned = pruned;
  into.shrunk = shrunk;
  return into;
}

/** The messages of the window: the candidates from `start` on, after every older pinned one. */
export function windowMessages(candidates: readonly ContextMessage[], start: number): ContextMessage[] {
  if (start === 0) return [...candidates];
  const messages: ContextMessage[] = [];
  for (let index = 0; index < start; index++) if (candidates[index]!.pinned === true) messages.push(candidates[index]!);
  for (let index = start; index < candidates.length; index++) messages.push(candidates[index]!);
  return messages;
}

/**
 * Whether a compaction of the window gave what the whole thread gives: the oldest turn of the window was set aside
 * by the selection (so every older one would have been: turns are kept newest first and contiguously), no turn
 * of the window is one the pruning protects for its age only, no approval answered in the window was asked
 * before it (the pruning pairs them across the thread), and the newest turn was not left whole over the target
 * because the window fits the budget (the whole thread may not).
 */
export function windowHeld({
  segments,
  firstSequence,
  reports,
  summaryCreated,
  outsideDecides,
  policy,
}: {
  /** The window's segments as the compaction got them. */
  segments: readonly ContextSegment[];
  /** The sequence of the window's first message. */
  firstSequence: number;
  /** What the stages reported. */
  reports: Pick<ContextStageReports, 'select'>;
  /** Whether a summary was written (never, without a summarizer). */
  summaryCreated: boolean;
  /** Whether a decision of the stages turned on how much the turns left out add (see `ContextStagesResult`). */
  outsideDecides: boolean;
  /** The pruning policy: how many newest turns it protects. */
  policy: Pick<ContextPolicy, 'prune'>;
}): boolean {
  if (summaryCreated || outsideDecides) return false;
  const start = segments.findIndex(
    (segment) => segment.kind === 'message' && segment.sequence !== null && segment.sequence >= firstSequence,
  );
  if (start < 0 || segments[start]!.messages[0]?.role !== 'user') return false;
  const turns = groupTurns(segments.slice(start));
  if (turns.length <= Math.max(policy.prune.reasoningTurns, policy.prune.toolTrafficTurns) + 1) return false;
  const oldest = turns[0]!.indices.map((index) => segments[start + index]!);
  const optional = oldest.filter((segment) => segment.kind === 'message' && !segment.pinned);
  if (optional.length === 0) return false;
  const setAside = new Set(
    reports.select.removed.filter((entry) => entry.reason === 'turn-trimmed').map((entry) => entry.sequence),
  );
  if (!optional.every((segment) => segment.kind === 'message' && setAside.has(segment.sequence))) return false;
  const requested = new Set<string>();
  const answered: string[] = [];
  for (const segment of segments)
    for (const message of segment.messages) {
      const ids = messageToolIds(message);
      for (const request of ids.approvalRequests) requested.add(request.approvalId);
      answered.push(...ids.approvalResponses);
    }
  return answered.every((id) => requested.has(id));
}
