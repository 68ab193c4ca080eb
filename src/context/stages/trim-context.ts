import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../engine/context-policy.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import {
  estimateSegments,
  groupTurns,
  hasUnfinishedToolWork,
  withMessages,
  type ContextSegment,
  type MessageSegment,
} from '../segments/context-segment.js';
import { previewToolOutput, toolOutputText } from './preview-tool-output.js';

/** A tool output replaced by a preview of at most `maxTokens` raw tokens. */
export interface ToolOutputPreview {
  /** The call whose result was shortened. */
  toolCallId: string;
  /** The preview's size limit. */
  maxTokens: number;
}

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
 * Stage 8, the final hard trim: makes the context fit `messageBudget`. When even the newest turn (with pinned
 * messages and unfinished tool work) does not fit on its own, its largest tool outputs first become marked
 * previews of `preview.tokens`, halved down to `preview.minimumTokens` as needed. Then whole older turns go,
 * oldest first (pinned messages stay), then the memory message, then outputs are previewed, then the summary
 * goes, then previews shrink further. A tool call never loses its result (segments hold both) and the newest
 * user input is never cut. What cannot be cut is reported as `overBudgetTokens`. Idempotent.
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
  if (over(messageBudget))
    trimmer.shorten(
      preview.tokens,
      () => over(messageBudget),
      () => true,
    );
  if (over(messageBudget)) trimmer.drop((segment) => segment.kind === 'summary', 'summary-dropped');
  for (const size of trimmer.sizes.slice(1))
    if (over(messageBudget))
      trimmer.shorten(
        size,
        () => over(messageBudget),
        () => true,
      );
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

function createTrimmer(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  preview: ContextToolOutputPreviewPolicy,
) {
  let current = [...segments];
  let total = estimateSegments(current, measure);
  const removed: ContextRemoval[] = [];
  const previews = new Map<string, number>();
  const sizes = [preview.tokens];
  for (let size = Math.floor(preview.tokens / 2); size > preview.minimumTokens; size = Math.floor(size / 2))
    sizes.push(size);
  if (preview.minimumTokens < preview.tokens) sizes.push(preview.minimumTokens);
  const trimmer = {
    get current() {
      return current;
    },
    sizes,
    total: () => total,
    over: (budget: number) => total > budget,
    /** Segment indices of the newest turn, turns with unfinished tool work, and pinned messages. */
    required(): Set<number> {
      const turns = groupTurns(current);
      const required = new Set<number>();
      turns.forEach((turn, position) => {
        if (position === turns.length - 1 || hasUnfinishedToolWork(turn.indices.map((index) => current[index]!)))
          for (const index of turn.indices) required.add(index);
      });
      current.forEach((segment, index) => {
        if (segment.kind === 'message' && segment.pinned) required.add(index);
      });
      return required;
    },
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
    previewRequired(budget: number) {
      if (total <= budget) return;
      const required = trimmer.required();
      const requiredTotal = () =>
        current.reduce((sum, segment, index) => sum + (required.has(index) ? measure.estimate(segment.tokens) : 0), 0);
      for (const size of sizes)
        trimmer.shorten(
          size,
          () => requiredTotal() > budget,
          (index) => required.has(index),
        );
    },
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

/** Options of {@link applyToolOutputPreviews}. */
export interface ApplyToolOutputPreviewsOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** The previews to make. */
  previews: readonly ToolOutputPreview[];
  /** Counts the previews. */
  measure: ContextMeasure;
}

/**
 * Replaces the outputs of the given tool calls with previews ({@link previewToolOutput}). {@link trimContext}
 * uses it, and a snapshot rebuild applies the stored previews with it. Unchanged segments keep their identity.
 */
export function applyToolOutputPreviews({ segments, previews, measure }: ApplyToolOutputPreviewsOptions): {
  segments: ContextSegment[];
} {
  if (previews.length === 0) return { segments: [...segments] };
  const sizes = new Map(previews.map((entry) => [entry.toolCallId, entry.maxTokens]));
  return {
    segments: segments.map((segment) => {
      if (segment.kind !== 'message') return segment;
      let changed = false;
      const messages = segment.messages.map((message): ModelMessage => {
        if (typeof message.content === 'string' || (message.role !== 'tool' && message.role !== 'assistant'))
          return message;
        let messageChanged = false;
        const content = message.content.map((part) => {
          if (part.type !== 'tool-result' || !sizes.has(part.toolCallId)) return part;
          const output = previewToolOutput({
            output: part.output,
            maxTokens: sizes.get(part.toolCallId)!,
            tokenCounter: measure.tokenCounter,
          });
          if (output === part.output) return part;
          messageChanged = true;
          return { ...part, output };
        });
        if (!messageChanged) return message;
        changed = true;
        return { ...message, content } as ModelMessage;
      });
      return changed ? withMessages(segment, messages, measure) : segment;
    }),
  };
}
