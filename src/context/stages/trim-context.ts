import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../engine/context-policy.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { groupTurns, type ContextSegment, type MessageSegment } from '../segments/context-segment.js';
import type { ToolOutputPreview } from './apply-tool-output-previews.js';
import { ContextBudgetExceededError } from '../engine/context-budget-exceeded-error.js';
import { createTrimmer } from './create-trimmer.js';

/** What {@link trimContext} did. */
export interface TrimStageReport {
  /** The stage's tag. */
  stage: 'trim';
  /** Whole turns, the memory or the summary dropped, and outputs previewed. */
  removed: ContextRemoval[];
  /** The previews made. */
  previews: ToolOutputPreview[];
  /** Estimated tokens still over the budget when nothing more can be cut (0 when it fits). */
  overBudgetTokens: number;
  /** Estimated tokens saved. */
  tokensSaved: number;
}

/** Options of {@link trimContext}. */
export interface TrimContextOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** Prices segments and counts previews. */
  measure: ContextMeasure;
  /** The budget for all messages. */
  messageBudget: number;
  /** Preview sizes. */
  preview: ContextToolOutputPreviewPolicy;
}

/**
 * Stage 8, the final hard trim: makes the context fit `messageBudget`, in this order. (1) When even the newest
 * turn (with pinned messages) does not fit on its own, its largest tool outputs become marked previews of
 * `preview.tokens`, halved down to `preview.minimumTokens` as needed. (2) Whole older turns go, oldest first
 * (pinned messages stay), (3) then the memory message, (4) then any tool output is previewed, (5) then the
 * summary goes, (6) then previews shrink further. (7) Then the reasoning of the newest turn goes, except that of
 * its newest assistant message, (8) and last whole rounds of the newest turn go, oldest first (an assistant
 * message with the tool messages that answer it, so a call keeps its result and an approval request its
 * response). The newest user
 * message, steering messages and pinned messages are never cut: when they alone do not fit, it throws
 * {@link ContextBudgetExceededError} rather than return an over-budget context. Idempotent.
 */
export function trimContext({ segments, measure, messageBudget, preview }: TrimContextOptions): {
  segments: ContextSegment[];
  previews: ToolOutputPreview[];
  report: TrimStageReport;
} {
  const trimmer = createTrimmer(segments, measure, preview);
  const { total, over } = trimmer;
  if (over(messageBudget)) {
    trimmer.previewRequired(messageBudget);
    // Then whole older turns go, oldest first (pinned messages stay).
    const turns = groupTurns(trimmer.current);
    const required = trimmer.required();
    const dropped = new Set<number>();
    let remaining = total();
    for (let position = 0; position < turns.length - 1 && remaining > messageBudget; position++) {
      const turn = turns[position]!;
      if (turn.indices.some((index) => required.has(index) && !(trimmer.current[index] as MessageSegment).pinned))
        continue;
      for (const index of turn.indices) {
        if (required.has(index)) continue;
        dropped.add(index);
        remaining -= measure.estimate(trimmer.current[index]!.tokens);
      }
    }
    trimmer.drop((_segment, index) => dropped.has(index), 'turn-trimmed');
  }
  if (over(messageBudget)) trimmer.drop((segment) => segment.kind === 'memory', 'memory-dropped');
  // Any output in the context may be previewed now, not only the newest turn's.
  const shortenAnyOutput = (size: number) =>
    trimmer.shorten(
      size,
      () => over(messageBudget),
      () => true,
    );
  if (over(messageBudget)) shortenAnyOutput(preview.tokens);
  if (over(messageBudget)) trimmer.drop((segment) => segment.kind === 'summary', 'summary-dropped');
  for (const size of trimmer.sizes.slice(1)) if (over(messageBudget)) shortenAnyOutput(size);
  trimmer.shrinkNewestTurn(messageBudget);
  if (over(messageBudget))
    throw new ContextBudgetExceededError({ messageBudgetTokens: messageBudget, requiredTokens: total() });
  return trimmer.result(messageBudget);
}

/**
 * The first step of {@link trimContext} on its own: when the newest turn (with pinned messages and unfinished
 * tool work) does not fit `messageBudget` by itself, its largest tool outputs become previews until it does.
 * The engine runs it before selecting and summarizing, so that one huge tool result is shortened instead of
 * pushing the whole history into a summary. Reported as a `trim` stage. Idempotent.
 */
export function previewOversizedOutputs({ segments, measure, messageBudget, preview }: TrimContextOptions): {
  segments: ContextSegment[];
  previews: ToolOutputPreview[];
  report: TrimStageReport;
} {
  const trimmer = createTrimmer(segments, measure, preview);
  trimmer.previewRequired(messageBudget);
  return trimmer.result(messageBudget);
}
