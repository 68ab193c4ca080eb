import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../engine/context-policy.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import {
  estimateSegments,
  groupTurns,
  hasUnfinishedToolWork,
  type ContextSegment,
} from '../segments/context-segment.js';
import { applyToolOutputPreviews, type ToolOutputPreview } from './apply-tool-output-previews.js';
import { toolOutputText } from './preview-tool-output.js';
import { dropRounds, stripOldReasoning, type ShrinkResult } from './shrink-newest-turn.js';
import type { TrimStageReport } from './trim-context.js';

/**
 * The trimming state shared by `trimContext` and `previewOversizedOutputs`: the context as cut so
 * far, its estimated total, and what was removed and previewed.
 */
export function createTrimmer(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  preview: ContextToolOutputPreviewPolicy,
) {
  let current = [...segments];
  let total = estimateSegments(current, measure);
  const removed: ContextRemoval[] = [];
  const previews = new Map<string, number>();
  const sizes = previewSizes(preview);
  const trimmer = {
    get current() {
      return current;
    },
    sizes,
    total: () => total,
    over: (budget: number) => total > budget,
    /** Segment indices of the newest turn, turns with unfinished tool work, and pinned messages. */
    required: () => requiredIndices(current),
    drop(predicate: (segment: ContextSegment, index: number) => boolean, reason: ContextRemoval['reason']) {
      current = current.filter((segment, index) => {
        if (!predicate(segment, index)) return true;
        const tokens = measure.estimate(segment.tokens);
        removed.push({ sequence: segment.kind === 'message' ? segment.sequence : null, reason, tokens });
        total -= tokens;
        return false;
      });
    },
    /** Shortens the largest tool outputs (of the segments `within` accepts) to `size` while `over()` holds. */
    shorten(size: number, over: () => boolean, within: (index: number) => boolean) {
      for (const candidate of previewCandidates(current, measure, within)) {
        if (!over()) return;
        if (candidate.tokens <= size) continue;
        const before = total;
        current = applyToolOutputPreviews({
          segments: current,
          previews: [{ toolCallId: candidate.toolCallId, maxTokens: size }],
          measure,
        }).segments;
        total = estimateSegments(current, measure);
        previews.set(candidate.toolCallId, size);
        removed.push({
          sequence: candidate.sequence,
          reason: 'tool-output-previewed',
          tokens: before - total,
          toolCallId: candidate.toolCallId,
        });
      }
    },
    apply(step: (segments: readonly ContextSegment[]) => ShrinkResult) {
      const shrunk = step(current);
      if (shrunk.removed.length > 0) {
        current = shrunk.segments;
        total = estimateSegments(current, measure);
        removed.push(...shrunk.removed);
      }
      return shrunk.removed.length > 0;
    },
    /** Indices of the newest turn (and of turns with unfinished tool work) that are not pinned. */
    /** Step 1: the largest tool outputs of what may never be dropped whole become previews until it fits `budget`. */
    previewRequired: (budget: number) => previewRequired(trimmer, measure, budget),
    /** The last steps: old reasoning of the newest turn, then its whole rounds, oldest first, until it fits. */
    shrinkNewestTurn: (budget: number) => shrinkNewestTurn(trimmer, measure, budget),
    result(budget: number): { segments: ContextSegment[]; previews: ToolOutputPreview[]; report: TrimStageReport } {
      const previewList = [...previews].map(([toolCallId, maxTokens]) => ({ toolCallId, maxTokens }));
      return {
        segments: current,
        previews: previewList,
        report: {
          stage: 'trim',
          removed,
          previews: previewList,
          overBudgetTokens: Math.max(0, total - budget),
          tokensSaved: sumRemovedTokens(removed),
        },
      };
    },
  };
  return trimmer;
}

type Trimmer = ReturnType<typeof createTrimmer>;

function previewRequired(trimmer: Trimmer, measure: ContextMeasure, budget: number): void {
  if (trimmer.total() <= budget) return;
  const required = trimmer.required();
  const requiredTotal = () =>
    trimmer.current.reduce(
      (sum, segment, index) => sum + (required.has(index) ? measure.estimate(segment.tokens) : 0),
      0,
    );
  for (const size of trimmer.sizes)
    trimmer.shorten(
      size,
      () => requiredTotal() > budget,
      (index) => required.has(index),
    );
}

function shrinkNewestTurn(trimmer: Trimmer, measure: ContextMeasure, budget: number): void {
  if (trimmer.over(budget))
    trimmer.apply((segments) => stripOldReasoning(segments, measure, newestTurnIndices(segments)));
  while (trimmer.over(budget)) {
    const excess = trimmer.total() - budget;
    const step = (segments: readonly ContextSegment[]) =>
      dropRounds(segments, measure, newestTurnIndices(segments), (saved) => saved < excess);
    if (!trimmer.apply(step)) return;
  }
}

/** Tool results in the segments, largest output first. */
function previewCandidates(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: (index: number) => boolean,
): Array<{ toolCallId: string; tokens: number; sequence: number | null }> {
  const candidates: Array<{ toolCallId: string; tokens: number; sequence: number | null; order: number }> = [];
  for (const [index, segment] of segments.entries()) {
    if (segment.kind !== 'message' || !within(index)) continue;
    for (const message of segment.messages) {
      if (typeof message.content === 'string' || (message.role !== 'tool' && message.role !== 'assistant')) continue;
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        candidates.push({
          toolCallId: part.toolCallId,
          tokens: measure.tokenCounter.count(toolOutputText(part.output)),
          sequence: segment.sequence,
          order: candidates.length,
        });
      }
    }
  }
  return candidates.sort((a, b) => b.tokens - a.tokens || a.order - b.order);
}

// The preview sizes tried in turn: `tokens`, halved down to `minimumTokens`.
function previewSizes(preview: ContextToolOutputPreviewPolicy): number[] {
  const sizes = [preview.tokens];
  for (let size = Math.floor(preview.tokens / 2); size > preview.minimumTokens; size = Math.floor(size / 2))
    sizes.push(size);
  if (preview.minimumTokens < preview.tokens) sizes.push(preview.minimumTokens);
  return sizes;
}

function newestTurnIndices(segments: readonly ContextSegment[]): (index: number) => boolean {
  const required = requiredIndices(segments);
  return (index) => required.has(index) && !(segments[index]!.kind === 'message' && segments[index]!.pinned);
}

function requiredIndices(segments: readonly ContextSegment[]): Set<number> {
  const turns = groupTurns(segments);
  const required = new Set<number>();
  turns.forEach((turn, position) => {
    if (position === turns.length - 1 || hasUnfinishedToolWork(turn.indices.map((index) => segments[index]!)))
      for (const index of turn.indices) required.add(index);
  });
  segments.forEach((segment, index) => {
    if (segment.kind === 'message' && segment.pinned) required.add(index);
  });
  return required;
}
