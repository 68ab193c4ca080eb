import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextPrunePolicy, ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import type { TrimResult } from './create-trimmer.js';
import { pruneOldestToolTraffic } from './prune-oldest-tool-traffic.js';
import type { PruneStageReport } from '../contracts/stage-reports.js';
import { sumRemovedTokens } from '../segments/context-removal.js';
import { estimateSegments, groupTurns, type ContextSegment, type ContextTurn } from '../segments/context-segment.js';
import { applyContextPruning, type ContextPruning } from './apply-context-pruning.js';
import { mapApprovalsToCalls } from '../segments/segment-tool-calls.js';
import { prunableToolCallIds } from './prunable-tool-calls.js';

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
   * The most `segments` may stand for beyond them (`outsideTokens` is then the least): the pruning is decided with
   * both, and `outsideDecides` says when where they lie may change it. @default outsideTokens
   */
  outsideTokensAtMost?: number;
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
export function pruneContext(options: PruneContextOptions): PruneContextResult {
  const { outsideTokens = 0, outsideTokensAtMost = outsideTokens, policy } = options;
  const { exhausted, sureCut, ...least } = pruneWithin(options, outsideTokens);
  if (!(outsideTokensAtMost > outsideTokens)) return { ...least, outsideDecides: false };
  // Chunks are counted from the oldest call: with more calls before these segments, they may end elsewhere.
  if (!sureCut) return { ...least, outsideDecides: true };
  const decidedByBudget = policy.toolTraffic === 'when-over-budget' || policy.reasoning === 'when-over-budget';
  // Pruned all it may with the least, it prunes the same with more.
  if (!decidedByBudget || exhausted) return { ...least, outsideDecides: false };
  const most = pruneWithin(options, outsideTokensAtMost);
  return { ...least, outsideDecides: !samePruning(least, most) };
}

/** What {@link pruneContext} gives. */
export interface PruneContextResult {
  /** The context pruned. */
  segments: ContextSegment[];
  /** What was removed. */
  report: PruneStageReport;
  /** The decision, to apply again. */
  pruning: ContextPruning;
  /** The previews made of the last call's inputs and outputs needed to fit (see `pruneOldestToolTraffic`). */
  previews: ToolOutputPreview[];
  /**
   * Whether where the tokens beyond the segments lie, between `outsideTokens` and `outsideTokensAtMost` (when the two
   * differ), may change the decision: the two decide differently, or the tool traffic went in chunks (counted from
   * the oldest call: more calls before the segments would move their ends) and not all of it, over the budget even so.
   */
  outsideDecides: boolean;
}

type Pruning = Omit<PruneContextResult, 'outsideDecides'>;

// Whether two prunings of the same segments removed and previewed the same.
function samePruning(a: Pruning, b: Pruning): boolean {
  const same = (x: readonly unknown[], y: readonly unknown[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    same(a.pruning.toolCallIds, b.pruning.toolCallIds) &&
    same(a.pruning.reasoningSequences, b.pruning.reasoningSequences) &&
    a.report.removed.length === b.report.removed.length &&
    JSON.stringify(a.previews) === JSON.stringify(b.previews)
  );
}

// The pruning, with `outsideTokens` standing for what the context holds beyond its segments; `exhausted` when it
// pruned all it may (a larger `outsideTokens` prunes the same); `sureCut` unless the tool traffic goes in chunks
// and was not all pruned, over the budget even so (more calls before the segments would move the chunks' ends).
function pruneWithin(
  { segments, measure, messageBudget, targetTokens = messageBudget, policy, preview }: PruneContextOptions,
  outsideTokens: number,
): Pruning & { exhausted: boolean; sureCut: boolean } {
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
    const combined = combine(first, traffic);
    const allTraffic = !whenOver || traffic?.all === true;
    const chunked = whenOver && targetTokens < messageBudget;
    const sureCut =
      !chunked || (allTraffic && estimateSegments(combined.segments, measure) + outsideTokens > messageBudget);
    return { ...combined, allTraffic, sureCut };
  };
  // `when-over-budget` keeps old reasoning while the context fits once the tool traffic is pruned, so a turn is
  // sent again as it was first sent.
  const { allTraffic, sureCut, ...outcome } = attempt(
    policy.reasoning === 'when-over-budget' ? 'none' : policy.reasoning,
  );
  if (policy.reasoning !== 'when-over-budget') return { ...outcome, exhausted: allTraffic, sureCut };
  if (estimateSegments(outcome.segments, measure) + outsideTokens <= messageBudget)
    return { ...outcome, exhausted: false, sureCut };
  const { allTraffic: all, sureCut: sure, ...retried } = attempt('outside-newest-turns');
  return { ...retried, exhausted: all, sureCut: sure };
}

type Pruned = ReturnType<typeof applyContextPruning>;

// The first pass's result with the tool traffic's pruning and previews applied.
function combine(
  first: Pruned,
  traffic: { pruned: Pruned | undefined; previewed: TrimResult | undefined } | undefined,
): Pruning {
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
  }): { pruned: Pruned | undefined; previewed: TrimResult | undefined; all: boolean } {
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
  if (!whenOver)
    return { pruned: candidates.size > 0 ? prune(candidates) : undefined, previewed: undefined, all: true };
  const oldest = pruneOldestToolTraffic({
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
  // Whether every prunable call's traffic went (none previewed instead).
  const all = !oldest?.previewed && (oldest?.pruned?.pruning.toolCallIds.length ?? 0) >= candidates.size;
  return { pruned: oldest?.pruned, previewed: oldest?.previewed, all };
}

/** Segment indices in the newest `count` turns. */
function newestTurnIndices(turns: readonly ContextTurn[], count: number): Set<number> {
  return new Set(turns.slice(Math.max(0, turns.length - count)).flatMap((turn) => turn.indices));
}
