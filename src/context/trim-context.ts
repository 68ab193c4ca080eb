import type { ModelMessage } from '@ai-sdk/provider-utils';
import type { ContextMeasure } from './context-measure.js';
import type { ContextToolOutputPreviewPolicy } from './context-policy.js';
import { sumRemovedTokens, type ContextRemoval } from './context-removal.js';
import { estimateSegments, groupTurns, hasUnfinishedToolWork, withMessages, type ContextSegment, type MessageSegment } from './context-segment.js';
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
 * Stage 8, the final hard trim: makes the context fit `messageBudget` by dropping, in order, whole older turns
 * (oldest first; pinned messages stay), the memory message, then, when even the newest turn does not fit,
 * replacing the largest tool outputs with marked previews of `preview.tokens`, dropping the summary, and
 * halving the previews down to `preview.minimumTokens`. A tool call never loses its result (segments hold
 * both) and the newest user input is never cut. What cannot be cut is reported as `overBudgetTokens`.
 * Idempotent.
 */
export function trimContext({ segments, measure, messageBudget, preview }: TrimContextOptions): { segments: ContextSegment[]; previews: ToolOutputPreview[]; report: TrimStageReport } {
  let current = [...segments];
  let total = estimateSegments(current, measure);
  const removed: ContextRemoval[] = [];
  const previews = new Map<string, number>();
  const drop = (predicate: (segment: ContextSegment, index: number) => boolean, reason: ContextRemoval['reason']) => {
    current = current.filter((segment, index) => {
      if (!predicate(segment, index)) return true;
      const tokens = measure.estimate(segment.tokens);
      removed.push({ sequence: segment.kind === 'message' ? segment.sequence : null, reason, tokens });
      total -= tokens;
      return false;
    });
  };
  if (total > messageBudget) {
    const turns = groupTurns(current);
    const dropped = new Set<number>();
    for (let position = 0; position < turns.length - 1 && total > messageBudget; position++) {
      const turnSegments = turns[position]!.indices.map((index) => current[index]!);
      if (hasUnfinishedToolWork(turnSegments)) continue;
      for (const index of turns[position]!.indices) {
        if ((current[index] as MessageSegment).pinned) continue;
        dropped.add(index);
        total -= measure.estimate(current[index]!.tokens);
      }
    }
    total = estimateSegments(current, measure);
    drop((_segment, index) => dropped.has(index), 'turn-trimmed');
  }
  if (total > messageBudget) drop((segment) => segment.kind === 'memory', 'memory-dropped');
  const shorten = (size: number) => {
    for (const candidate of previewCandidates(current, measure)) {
      if (total <= messageBudget) return;
      if (candidate.tokens <= size) continue;
      const before = total;
      const applied = applyToolOutputPreviews({ segments: current, previews: [{ toolCallId: candidate.toolCallId, maxTokens: size }], measure });
      current = applied.segments;
      total = estimateSegments(current, measure);
      previews.set(candidate.toolCallId, size);
      removed.push({ sequence: candidate.sequence, reason: 'tool-output-previewed', tokens: before - total, toolCallId: candidate.toolCallId });
    }
  };
  if (total > messageBudget) shorten(preview.tokens);
  if (total > messageBudget) drop((segment) => segment.kind === 'summary', 'summary-dropped');
  for (let size = Math.floor(preview.tokens / 2); total > messageBudget && size >= preview.minimumTokens; size = Math.floor(size / 2)) shorten(size);
  if (total > messageBudget && preview.minimumTokens < preview.tokens) shorten(preview.minimumTokens);
  const previewList = [...previews].map(([toolCallId, maxTokens]) => ({ toolCallId, maxTokens }));
  return {
    segments: current,
    previews: previewList,
    report: { stage: 'trim', removed, previews: previewList, overBudgetTokens: Math.max(0, total - messageBudget), tokensSaved: sumRemovedTokens(removed) },
  };
}

/** Tool results in the segments, largest output first. */
function previewCandidates(segments: readonly ContextSegment[], measure: ContextMeasure): Array<{ toolCallId: string; tokens: number; sequence: number | null }> {
  const candidates: Array<{ toolCallId: string; tokens: number; sequence: number | null; order: number }> = [];
  for (const segment of segments) {
    if (segment.kind !== 'message') continue;
    for (const message of segment.messages) {
      if (typeof message.content === 'string' || (message.role !== 'tool' && message.role !== 'assistant')) continue;
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        candidates.push({ toolCallId: part.toolCallId, tokens: measure.tokenCounter.count(toolOutputText(part.output)), sequence: segment.sequence, order: candidates.length });
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
export function applyToolOutputPreviews({ segments, previews, measure }: ApplyToolOutputPreviewsOptions): { segments: ContextSegment[] } {
  if (previews.length === 0) return { segments: [...segments] };
  const sizes = new Map(previews.map((entry) => [entry.toolCallId, entry.maxTokens]));
  return {
    segments: segments.map((segment) => {
      if (segment.kind !== 'message') return segment;
      let changed = false;
      const messages = segment.messages.map((message): ModelMessage => {
        if (typeof message.content === 'string' || (message.role !== 'tool' && message.role !== 'assistant')) return message;
        let messageChanged = false;
        const content = message.content.map((part) => {
          if (part.type !== 'tool-result' || !sizes.has(part.toolCallId)) return part;
          const output = previewToolOutput({ output: part.output, maxTokens: sizes.get(part.toolCallId)!, tokenCounter: measure.tokenCounter });
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
