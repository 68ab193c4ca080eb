import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import { withMessages, type ContextSegment } from '../segments/context-segment.js';
import { previewContentPart } from './preview-message-content.js';
import { memoizedContentKey } from './preview-candidates.js';
import { previewToolInput } from './preview-tool-input.js';

type ContentPart = Exclude<ModelMessage['content'], string>[number];
import { previewToolOutput } from './preview-tool-output.js';

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
  const sizes = (part: ToolOutputPreview['part']) =>
    new Map(previews.filter((entry) => entry.part === part).map((entry) => [callKey(entry), entry.maxTokens]));
  const outputs = sizes(undefined);
  const inputs = sizes('input');
  const contents = new Map(
    previews.filter((entry) => entry.part === 'content').map((entry) => [entry.toolCallId, entry.maxTokens]),
  );
  const tokenCounter = measure.tokenCounter;
  return {
    segments: segments.map((segment) => {
      if (segment.kind !== 'message') return segment;
      let changed = false;
      const messages = segment.messages.map((message): ModelMessage => {
        if (typeof message.content === 'string' || message.role === 'system') return message;
        let messageChanged = false;
        const content = (message.content as ContentPart[]).map((part) => {
          const key = contents.size > 0 ? memoizedContentKey(segment.sequence, part) : undefined;
          if (key !== undefined && contents.has(key)) {
            const preview = previewContentPart(part, contents.get(key)!, tokenCounter);
            if (preview !== part) messageChanged = true;
            return preview;
          }
          const outputSize =
            part.type === 'tool-result' ? sizeOf(outputs, segment.sequence, part.toolCallId) : undefined;
          if (part.type === 'tool-result' && outputSize !== undefined) {
            const output = previewToolOutput({ output: part.output, maxTokens: outputSize, tokenCounter });
            if (output === part.output) return part;
            messageChanged = true;
            return { ...part, output };
          }
          const inputSize = part.type === 'tool-call' ? sizeOf(inputs, segment.sequence, part.toolCallId) : undefined;
          if (part.type === 'tool-call' && inputSize !== undefined) {
            const input = previewToolInput({ input: part.input, maxTokens: inputSize, tokenCounter });
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

/** The key of a call's preview: its id, and the message it is in (a sequence, or null: not stored) when named. */
export const callKey = ({ toolCallId, sequence }: Pick<ToolOutputPreview, 'toolCallId' | 'sequence'>) =>
  sequence === undefined ? toolCallId : `${sequence}\u0000${toolCallId}`;

// A call's preview size: the one made in its message, else one made of every call with its id.
function sizeOf(sizes: ReadonlyMap<string, number>, sequence: number | null, toolCallId: string): number | undefined {
  return sizes.get(callKey({ toolCallId, sequence })) ?? sizes.get(toolCallId);
}
