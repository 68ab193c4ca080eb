import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextPrunePolicy } from '../contracts/context-policy.js';
import type { PruneStageReport } from '../contracts/stage-reports.js';
import { sumRemovedTokens } from '../segments/context-removal.js';
import {
  estimateSegments,
  groupTurns,
  turnHasUnfinishedToolWork,
  type ContextSegment,
  type ContextTurn,
} from '../segments/context-segment.js';
import { applyContextPruning, type ContextPruning } from './apply-context-pruning.js';
import { mapApprovalsToCalls, segmentToolCallIds } from '../segments/segment-tool-calls.js';

/** Options of {@link pruneContext}. */
export interface PruneContextOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** Counts changed messages and prices them. */
  measure: ContextMeasure;
  /** The budget for all messages; `toolTraffic: 'when-over-budget'` prunes only above it. */
  messageBudget: number;
  /** What to prune. */
  policy: ContextPrunePolicy;
  /** Tokens the context stands for beyond `segments`, counted against `messageBudget`. @default 0 */
  outsideTokens?: number;
}

/**
 * Stage 5, lossless pruning: removes reasoning outside the newest turns, old tool traffic (a call goes with
 * its result and its approval request and response, never alone: ids used by a protected turn are kept
 * everywhere, as `pruneMessages` does) and messages left empty. Pinned segments are never pruned, turns with unfinished tool
 * work keep their tool traffic; the current input is never removed. Idempotent: pruning its output changes
 * nothing.
 */
export function pruneContext({ segments, measure, messageBudget, policy, outsideTokens = 0 }: PruneContextOptions): {
  segments: ContextSegment[];
  report: PruneStageReport;
  pruning: ContextPruning;
} {
  const turns = groupTurns(segments);
  const reasoningProtected = newestTurnIndices(turns, policy.reasoningTurns);
  const first = applyContextPruning({
    segments,
    measure,
    reasoningFrom: (segment, index) =>
      policy.reasoning !== 'none' && !segment.pinned && (policy.reasoning === 'all' || !reasoningProtected.has(index)),
    toolCallIds: new Set(),
    emptyMessages: policy.emptyMessages,
  });
  let result = first;
  let toolTraffic: PruneStageReport['toolTraffic'] = 'kept';
  const overBudget = estimateSegments(first.segments, measure) + outsideTokens > messageBudget;
  if (policy.toolTraffic === 'outside-newest-turns' || (policy.toolTraffic === 'when-over-budget' && overBudget)) {
    const approvalToCall = mapApprovalsToCalls(first.segments);
    // The first pass removes no message segment but one it emptied, which opens no turn unless it was a user's.
    const sameTurns = first.segments.length === segments.length;
    const toolCallIds = prunableToolCallIds(
      first.segments,
      sameTurns ? turns : groupTurns(first.segments),
      policy.toolTrafficTurns,
      approvalToCall,
    );
    if (toolCallIds.size > 0) {
      toolTraffic = 'pruned';
      const second = applyContextPruning({
        segments: first.segments,
        measure,
        reasoningFrom: () => false,
        toolCallIds,
        emptyMessages: policy.emptyMessages,
        approvalToCall,
      });
      result = {
        segments: second.segments,
        removed: [...first.removed, ...second.removed],
        pruning: {
          ...first.pruning,
          toolCallIds: second.pruning.toolCallIds,
          toolCallSequences: second.pruning.toolCallSequences,
        },
      };
    }
  }
  return {
    segments: result.segments,
    pruning: result.pruning,
    report: { stage: 'prune', removed: result.removed, toolTraffic, tokensSaved: sumRemovedTokens(result.removed) },
  };
}

/** Segment indices in the newest `count` turns. */
function newestTurnIndices(turns: readonly ContextTurn[], count: number): Set<number> {
  return new Set(turns.slice(Math.max(0, turns.length - count)).flatMap((turn) => turn.indices));
}

/** Tool call ids outside the protected turns (newest, pinned, unfinished) that no protected segment uses. */
function prunableToolCallIds(
  segments: readonly ContextSegment[],
  turns: readonly ContextTurn[],
  keepTurns: number,
  approvalToCall: ReadonlyMap<string, string>,
): Set<string> {
  // One flag per segment, set for the protected ones.
  const protectedAt = new Uint8Array(segments.length);
  for (let position = 0; position < turns.length; position++) {
    const { indices } = turns[position]!;
    if (position >= turns.length - keepTurns || turnHasUnfinishedToolWork(segments, indices))
      for (let index = 0; index < indices.length; index++) protectedAt[indices[index]!] = 1;
  }
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if (segment.kind !== 'message' || segment.pinned) protectedAt[index] = 1;
  }
  const keep = new Set<string>();
  const candidates = new Set<string>();
  for (let index = 0; index < segments.length; index++) {
    const ids = segmentToolCallIds(segments[index]!, approvalToCall);
    const into = protectedAt[index] === 1 ? keep : candidates;
    for (let position = 0; position < ids.length; position++) into.add(ids[position]!);
  }
  for (const id of keep) candidates.delete(id);
  return candidates;
}
