import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextPrunePolicy, ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import type { TrimResult } from './create-trimmer.js';
import { pruneOldestToolTraffic } from './prune-oldest-tool-traffic.js';
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
  /**
   * The size `toolTraffic: 'when-over-budget'` prunes down to once over `messageBudget`: the oldest calls' traffic
   * goes first, and no more of it than needed to fit (all of it when that is not enough).
   * @default messageBudget
   */
  targetTokens?: number;
  /** What to prune. */
  policy: ContextPrunePolicy;
  /** Tokens the context stands for beyond `segments`, counted against `messageBudget`. @default 0 */
  outsideTokens?: number;
  /**
   * Preview sizes: the last call whose traffic is needed to fit has its inputs and outputs previewed instead, when
   * that fits. Without, its traffic goes whole. @default none
   */
  preview?: ContextToolOutputPreviewPolicy;
}

/**
 * Stage 5, lossless pruning: removes reasoning outside the newest turns, old tool traffic (a call goes with
 * its result and its approval request and response, never alone: ids used by a protected turn are kept
 * everywhere, as `pruneMessages` does) and messages left empty. With `toolTraffic: 'when-over-budget'`, only a
 * context over `messageBudget` loses tool traffic, oldest call first, and only as much as it takes to fit
 * `targetTokens`. Pinned segments are never pruned, turns with unfinished tool work keep their tool traffic; the
 * current input is never removed. Idempotent: pruning its output changes nothing.
 */
export function pruneContext({
  segments,
  measure,
  messageBudget,
  targetTokens = messageBudget,
  policy,
  outsideTokens = 0,
  preview,
}: PruneContextOptions): {
  segments: ContextSegment[];
  report: PruneStageReport;
  pruning: ContextPruning;
  /** The previews made of the last call's inputs and outputs needed to fit (see `pruneOldestToolTraffic`). */
  previews: ToolOutputPreview[];
} {
  const turns = groupTurns(segments);
  const reasoningProtected = newestTurnIndices(turns, policy.reasoningTurns);
  const pruneReasoning = (reasoning: ContextPrunePolicy['reasoning']) =>
    applyContextPruning({
      segments,
      measure,
      reasoningFrom: (segment, index) =>
        reasoning !== 'none' && !segment.pinned && (reasoning === 'all' || !reasoningProtected.has(index)),
      toolCallIds: new Set(),
      emptyMessages: policy.emptyMessages,
    });
  const whenOver = policy.toolTraffic === 'when-over-budget';
  const attempt = (reasoning: ContextPrunePolicy['reasoning']) => {
    const first = pruneReasoning(reasoning);
    const firstTokens = estimateSegments(first.segments, measure) + outsideTokens;
    const traffic =
      policy.toolTraffic === 'outside-newest-turns' || (whenOver && firstTokens > messageBudget)
        ? pruneToolTraffic({
            segments,
            turns,
            first,
            measure,
            policy,
            whenOver,
            messageBudget,
            targetTokens,
            outsideTokens,
            preview,
          })
        : undefined;
    return combine(first, traffic);
  };
  // `when-over-budget` keeps old reasoning while the context fits once the tool traffic is pruned, so a turn is
  // sent again as it was first sent.
  let outcome = attempt(policy.reasoning === 'when-over-budget' ? 'none' : policy.reasoning);
  if (
    policy.reasoning === 'when-over-budget' &&
    estimateSegments(outcome.segments, measure) + outsideTokens > messageBudget
  )
    outcome = attempt('outside-newest-turns');
  return outcome;
}

type Pruned = ReturnType<typeof applyContextPruning>;

// The first pass's result with the tool traffic's pruning and previews applied.
function combine(
  first: Pruned,
  traffic: { pruned: Pruned | undefined; previewed: TrimResult | undefined } | undefined,
): ReturnType<typeof pruneContext> {
  const second = traffic?.pruned;
  const toolTraffic: PruneStageReport['toolTraffic'] =
    second && second.pruning.toolCallIds.length > 0 ? 'pruned' : 'kept';
  let result = first;
  if (second && toolTraffic === 'pruned')
    result = {
      segments: second.segments,
      removed: [...first.removed, ...second.removed],
      pruning: {
        ...first.pruning,
        toolCallIds: second.pruning.toolCallIds,
        toolCallSequences: second.pruning.toolCallSequences,
      },
    };
  const previewed = traffic?.previewed;
  if (previewed)
    result = { ...result, segments: previewed.segments, removed: [...result.removed, ...previewed.report.removed] };
  return {
    segments: result.segments,
    pruning: result.pruning,
    previews: previewed?.previews ?? [],
    report: { stage: 'prune', removed: result.removed, toolTraffic, tokensSaved: sumRemovedTokens(result.removed) },
  };
}

// The tool traffic pruned after the first pass: the oldest calls' until the context fits (`whenOver`), else every
// prunable call's.
function pruneToolTraffic({
  segments,
  turns,
  first,
  measure,
  policy,
  whenOver,
  messageBudget,
  targetTokens,
  outsideTokens,
  preview,
}: Required<Pick<PruneContextOptions, 'measure' | 'policy' | 'messageBudget' | 'targetTokens' | 'outsideTokens'>> &
  Pick<PruneContextOptions, 'segments' | 'preview'> & {
    turns: readonly ContextTurn[];
    first: Pruned;
    whenOver: boolean;
  }): { pruned: Pruned | undefined; previewed: TrimResult | undefined } | undefined {
  const approvalToCall = mapApprovalsToCalls(first.segments);
  // The first pass removes no message segment but one it emptied, which opens no turn unless it was a user's.
  const sameTurns = first.segments.length === segments.length;
  const candidates = prunableToolCallIds(
    first.segments,
    sameTurns ? turns : groupTurns(first.segments),
    policy.toolTrafficTurns,
    approvalToCall,
  );
  const prune = (toolCallIds: ReadonlySet<string>) =>
    applyContextPruning({
      segments: first.segments,
      measure,
      reasoningFrom: () => false,
      toolCallIds,
      emptyMessages: policy.emptyMessages,
      approvalToCall,
    });
  if (!whenOver) return { pruned: candidates.size > 0 ? prune(candidates) : undefined, previewed: undefined };
  return pruneOldestToolTraffic({
    segments: first.segments,
    ordered: [...candidates],
    prune,
    tokensOf: (pruned) => estimateSegments(pruned, measure) + outsideTokens,
    targetTokens,
    // Below the budget, in chunks of the room between the two marks: the cut moves once per chunk of growth.
    chunkTokens: messageBudget - targetTokens,
    budgetTokens: messageBudget,
    measure,
    preview,
    approvalToCall,
  });
}

/** Segment indices in the newest `count` turns. */
function newestTurnIndices(turns: readonly ContextTurn[], count: number): Set<number> {
  return new Set(turns.slice(Math.max(0, turns.length - count)).flatMap((turn) => turn.indices));
}

/**
 * Tool call ids outside the protected turns (newest, pinned, unfinished) that no protected segment uses, in the
 * order they first appear (oldest first).
 */
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
