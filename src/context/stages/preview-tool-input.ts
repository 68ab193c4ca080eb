import type { TokenCounter } from '../../tokens/token-counter.js';

/** The first words of every input preview, so the model can tell a shortened tool input from a real one. */
export const toolInputPreviewMarker = '[agent-history: tool input shortened to fit the context window;';

/** The single key of a previewed tool input (an object, as providers require a tool call's input to be). */
export const toolInputPreviewKey = 'agentHistoryInputPreview';

const originals = new WeakMap<object, unknown>();

/** Whether the input is a preview this process made (cut from another input). */
export function isToolInputPreview(input: unknown): boolean {
  return typeof input === 'object' && input !== null && originals.has(input);
}

/** The text of a tool input as providers send it (its JSON). */
export function toolInputText(input: unknown): string {
  return typeof input === 'string' ? input : (JSON.stringify(input ?? {}) ?? '{}');
}

/** Options of {@link previewToolInput}. */
export interface PreviewToolInputOptions {
  /** The input to shorten. */
  input: unknown;
  /** The preview's largest size in raw tokens (of its JSON), marker included. */
  maxTokens: number;
  /** The raw counter. */
  tokenCounter: TokenCounter;
}

/**
 * Shortens a tool call's input to at most `maxTokens` raw tokens: an object with the one key
 * {@link toolInputPreviewKey} whose text starts with {@link toolInputPreviewMarker} and continues with the
 * beginning of the input's JSON. An input that fits is returned as it is; a preview of a preview is cut from the
 * original input, so shortening in two steps gives the same value as shortening once.
 */
export function previewToolInput({ input, maxTokens, tokenCounter }: PreviewToolInputOptions): unknown {
  const original = typeof input === 'object' && input !== null && originals.has(input) ? originals.get(input) : input;
  const text = toolInputText(original);
  const total = tokenCounter.count(text);
  if (total <= maxTokens) return original;
  const marker = (shown: number) =>
    `${toolInputPreviewMarker} the first ${shown} of ${total} tokens are shown; the full input is in the conversation log.]\n`;
  // Never below 0: a negative size (a stored record may hold one) would slice from the end and never shrink to 0.
  let length = Math.max(0, Math.min(text.length, maxTokens * 4));
  let preview: Record<string, string> = {};
  for (;;) {
    if (length > 0 && length < text.length && isHighSurrogate(text.charCodeAt(length - 1))) length -= 1;
    const excerpt = text.slice(0, length);
    preview = { [toolInputPreviewKey]: `${marker(tokenCounter.count(excerpt))}${excerpt}` };
    if (tokenCounter.count(JSON.stringify(preview)) <= maxTokens || length === 0) break;
    length = Math.floor(length * 0.8);
  }
  originals.set(preview, original);
  return preview;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
