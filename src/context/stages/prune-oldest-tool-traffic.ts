import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import type { ContextSegment } from '../segments/context-segment.js';
import { segmentToolCallIds } from '../segments/segment-tool-calls.js';
import type { applyContextPruning } from './apply-context-pruning.js';
import { createTrimmer, type TrimResult } from './create-trimmer.js';
import { toolTrafficChunkEnds } from './tool-traffic-chunks.js';

type Pruned = ReturnType<typeof applyContextPruning>;

/** Options of {@link pruneOldestToolTraffic}. */
export interface PruneOldestToolTrafficOptions {
  /** The context before any tool traffic is pruned. */
  segments: readonly ContextSegment[];
  /** The prunable calls, oldest first. */
  ordered: readonly string[];
  /** Prunes the traffic of the given calls from `segments`. */
  prune: (toolCallIds: ReadonlySet<string>) => Pruned;
  /** What a context counts against the target (its estimate and what it stands for beyond its segments). */
  tokensOf: (segments: readonly ContextSegment[]) => number;
  /** The size to fit. */
  targetTokens: number;
  /**
   * Prune in chunks of about this many tokens of traffic (from the oldest call), the fewest that fit
   * `budgetTokens`, rather than the fewest calls that fit `targetTokens`: the cut moves only when the context
   * reaches the budget again. @default none (call by call)
   */
  chunkTokens?: number;
  /** With `chunkTokens`: the size to fit (the high-water mark). @default targetTokens */
  budgetTokens?: number;
  /** Prices segments and counts previews. */
  measure: ContextMeasure;
  /** Preview sizes; without, the last call needed goes whole. */
  preview: ContextToolOutputPreviewPolicy | undefined;
  /** Approval id → tool call id, over every segment. */
  approvalToCall: ReadonlyMap<string, string>;
}

/**
 * Removes the traffic of the fewest oldest calls that makes the context fit `targetTokens` (all of them when that
 * is not enough; pruning more never adds tokens, so a binary search over how many finds it). The last call needed
 * often carries most of what is removed (a 50 KB output): rather than remove it whole, its segment's tool inputs
 * and outputs become previews (largest first, at the preview sizes) just large enough to fit, when that fits
 * (with fixed sizing, at the preview size or not at all).
 * Undefined when there is nothing to prune.
 */
export function pruneOldestToolTraffic(
  options: PruneOldestToolTrafficOptions,
): { pruned: Pruned | undefined; previewed: TrimResult | undefined } | undefined {
  const { ordered, prune, tokensOf, targetTokens } = options;
  if (ordered.length === 0) return undefined;
  const all = prune(new Set(ordered));
  if (options.chunkTokens !== undefined && options.chunkTokens > 0)
    return { pruned: inChunks(options, all), previewed: undefined };
  if (tokensOf(all.segments) > targetTokens) return { pruned: all, previewed: undefined };
  let low = 1;
  let high = ordered.length;
  let fitted = all;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const tried = prune(new Set(ordered.slice(0, middle)));
    if (tokensOf(tried.segments) <= targetTokens) {
      fitted = tried;
      high = middle;
    } else low = middle + 1;
  }
  const before = high > 1 ? prune(new Set(ordered.slice(0, high - 1))) : undefined;
  const previewed = previewToFit(options, before?.segments ?? options.segments, ordered[high - 1]!);
  return previewed ? { pruned: before, previewed } : { pruned: fitted, previewed: undefined };
}

// The fewest whole chunks whose pruning fits the budget (all of them when none does).
function inChunks(
  { segments, ordered, prune, tokensOf, chunkTokens, budgetTokens, targetTokens }: PruneOldestToolTrafficOptions,
  all: Pruned,
): Pruned {
  const ends = toolTrafficChunkEnds(segments, ordered, chunkTokens!);
  const budget = budgetTokens ?? targetTokens;
  let low = 0;
  let high = ends.length - 1;
  let fitted = all;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const tried = prune(new Set(ordered.slice(0, ends[middle])));
    if (tokensOf(tried.segments) <= budget) {
      fitted = tried;
      high = middle;
    } else low = middle + 1;
  }
  return fitted;
}

// The segments that hold the call, their tool inputs and outputs previewed until the context fits; undefined when
// previews do not make it fit.
function previewToFit(
  { measure, preview, tokensOf, targetTokens, approvalToCall }: PruneOldestToolTrafficOptions,
  segments: readonly ContextSegment[],
  toolCallId: string,
): TrimResult | undefined {
  if (!preview) return undefined;
  const within = new Set<number>();
  segments.forEach((segment, index) => {
    if (segmentToolCallIds(segment, approvalToCall).includes(toolCallId)) within.add(index);
  });
  const trimmer = createTrimmer(segments, measure, preview);
  const excess = () => tokensOf(trimmer.current) - targetTokens;
  for (const size of trimmer.shrinkSizes) if (excess() > 0) trimmer.shorten(size, excess, within);
  if (excess() > 0) return undefined;
  trimmer.grow([], () => -excess());
  return trimmer.result(targetTokens);
}
