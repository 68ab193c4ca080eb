import type { ToolResultOutput } from '../../tokens/convert-ui-message.js';
import type { TokenCounter } from '../../tokens/token-counter.js';

/** The first words of every preview, so the model (and a reader of the snapshot) can tell a preview from an output. */
export const toolOutputPreviewMarker = '[agent-history: tool output shortened to fit the context window;';

const originals = new WeakMap<object, ToolResultOutput>();

/** Whether the output is a preview this process made (cut from another output). */
export function isToolOutputPreview(output: unknown): boolean {
  return typeof output === 'object' && output !== null && originals.has(output);
}

/** The text a tool output shows the model, as the preview cuts it. */
export function toolOutputText(output: ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value) ?? 'null';
    case 'execution-denied':
      return output.reason ?? '';
    case 'content':
      return output.value
        .map((item) =>
          item.type === 'text' ? item.text : `[${item.type}${'mediaType' in item ? ` ${item.mediaType}` : ''}]`,
        )
        .join('\n');
    default:
      return JSON.stringify(output) ?? '';
  }
}

/** Options of {@link previewToolOutput}. */
export interface PreviewToolOutputOptions {
  /** The output to shorten. */
  output: ToolResultOutput;
  /** The preview's largest size in raw tokens, marker included. */
  maxTokens: number;
  /** The raw counter. */
  tokenCounter: TokenCounter;
}

/**
 * Shortens a tool output to at most `maxTokens` raw tokens: a text (or error text) output that starts with
 * {@link toolOutputPreviewMarker}, says how much is shown, and continues with the beginning of the output.
 * An output that already fits is returned as it is. A preview of a preview is cut from the original output
 * (remembered per preview object), so shortening in two steps gives the same text as shortening once.
 */
export function previewToolOutput({ output, maxTokens, tokenCounter }: PreviewToolOutputOptions): ToolResultOutput {
  const original = originals.get(output) ?? output;
  const text = toolOutputText(original);
  const total = tokenCounter.count(text);
  if (total <= maxTokens && original === output) return output;
  if (total <= maxTokens) return original;
  const marker = (shown: number) =>
    `${toolOutputPreviewMarker} the first ${shown} of ${total} tokens are shown; the full output is in the conversation log.]\n`;
  // Never below 0: a negative size (a stored record may hold one) would slice from the end and never shrink to 0.
  let length = Math.max(0, Math.min(text.length, maxTokens * 4));
  let preview = '';
  for (;;) {
    if (length > 0 && length < text.length && isHighSurrogate(text.charCodeAt(length - 1))) length -= 1;
    const excerpt = text.slice(0, length);
    const shown = tokenCounter.count(excerpt);
    preview = `${marker(shown)}${excerpt}`;
    if (tokenCounter.count(preview) <= maxTokens || length === 0) break;
    length = Math.floor(length * 0.8);
  }
  const result: ToolResultOutput =
    original.type === 'error-text' || original.type === 'error-json'
      ? { type: 'error-text', value: preview }
      : { type: 'text', value: preview };
  originals.set(result, original);
  return result;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
