import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { withMessages, type ContextSegment } from '../segments/context-segment.js';
import { previewToolOutput } from './preview-tool-output.js';

/** A tool output replaced by a preview of at most `maxTokens` raw tokens. */
export interface ToolOutputPreview {
  /** The call whose result was shortened. */
  toolCallId: string;
  /** The preview's size limit. */
  maxTokens: number;
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
