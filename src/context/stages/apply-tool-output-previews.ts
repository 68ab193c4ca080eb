import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { withMessages, type ContextSegment } from '../segments/context-segment.js';
import { previewToolInput } from './preview-tool-input.js';
import { previewToolOutput } from './preview-tool-output.js';

/** A tool output (or, with `part: 'input'`, a tool call's input) replaced by a preview of at most `maxTokens` raw tokens. */
export interface ToolOutputPreview {
  /** The call whose result (or input) was shortened. */
  toolCallId: string;
  /** The preview's size limit. */
  maxTokens: number;
  /** What was shortened: the call's input, or (when absent) its output. */
  part?: 'input';
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
 * Replaces the outputs (and inputs) of the given tool calls with previews ({@link previewToolOutput},
 * {@link previewToolInput}). {@link trimContext} uses it, and a snapshot rebuild applies the stored previews
 * with it. Unchanged segments keep their identity.
 */
export function applyToolOutputPreviews({ segments, previews, measure }: ApplyToolOutputPreviewsOptions): {
  segments: ContextSegment[];
} {
  if (previews.length === 0) return { segments: [...segments] };
  const outputs = new Map(previews.filter((entry) => !entry.part).map((entry) => [entry.toolCallId, entry.maxTokens]));
  const inputs = new Map(previews.filter((entry) => entry.part).map((entry) => [entry.toolCallId, entry.maxTokens]));
  const tokenCounter = measure.tokenCounter;
  return {
    segments: segments.map((segment) => {
      if (segment.kind !== 'message') return segment;
      let changed = false;
      const messages = segment.messages.map((message): ModelMessage => {
        if (typeof message.content === 'string' || (message.role !== 'tool' && message.role !== 'assistant'))
          return message;
        let messageChanged = false;
        const content = message.content.map((part) => {
          if (part.type === 'tool-result' && outputs.has(part.toolCallId)) {
            const output = previewToolOutput({
              output: part.output,
              maxTokens: outputs.get(part.toolCallId)!,
              tokenCounter,
            });
            if (output === part.output) return part;
            messageChanged = true;
            return { ...part, output };
          }
          if (part.type === 'tool-call' && inputs.has(part.toolCallId)) {
            const input = previewToolInput({
              input: part.input,
              maxTokens: inputs.get(part.toolCallId)!,
              tokenCounter,
            });
            if (input === part.input) return part;
            messageChanged = true;
            return { ...part, input };
          }
          return part;
        });
        if (!messageChanged) return message;
        changed = true;
        return { ...message, content } as ModelMessage;
      });
      return changed ? withMessages(segment, messages, measure) : segment;
    }),
  };
}
