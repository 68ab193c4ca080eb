import type { ContextMessage } from '../../model/context-store.js';
import { groupTurns, messageToolIds, type ContextSegment } from '../segments/context-segment.js';
import type { ContextPolicy } from './context-policy.js';
import type { ContextStageReports } from './run-context-stages.js';

/**
 * How much of a long thread a compaction starts from: the newest turns whose stored counts add up to
 * `rawTokens` (at least `minimumTurns` turns, starting at a user message), plus every older pinned message.
 * The older turns are set aside whole, unconverted: the selection would not keep them ({@link windowHeld} checks
 * that it did not, else the compaction runs again over the whole thread).
 */
export interface ContextWindowSize {
  /** Stored raw tokens to take, newest first, before the window may end. */
  rawTokens: number;
  /** Turns to take at least. */
  minimumTurns: number;
}

/**
 * The index in `candidates` (sorted by sequence) where the window starts: a user message, with at least
 * `size.rawTokens` stored tokens and `size.minimumTurns` turns from it on; 0 (the whole thread) when there is no
 * such message.
 */
export function findWindowStart(candidates: readonly ContextMessage[], size: ContextWindowSize): number {
  let tokens = 0;
  let turns = 0;
  for (let index = candidates.length - 1; index > 0; index--) {
    const stored = candidates[index];
    if (typeof stored?.message !== 'object' || stored.message === null) return 0;
    // A message without a stored count, or one that never reaches the model, adds nothing: the window only grows.
    const reaches = stored.deletedAt == null && (stored.contextState ?? 'eligible') === 'eligible';
    tokens += reaches && typeof stored.tokenCount === 'number' ? stored.tokenCount : 0;
    if (stored.message.role !== 'user') continue;
    turns += 1;
    if (tokens >= size.rawTokens && turns >= size.minimumTurns) return index;
  }
  return 0;
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
 * of the window is one the pruning protects for its age only, and no approval answered in the window was asked
 * before it (the pruning pairs them across the thread).
 */
export function windowHeld({
  segments,
  firstSequence,
  reports,
  summaryCreated,
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
  /** The pruning policy: how many newest turns it protects. */
  policy: Pick<ContextPolicy, 'prune'>;
}): boolean {
  if (summaryCreated) return false;
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
