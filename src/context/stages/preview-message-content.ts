import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { memoOfCounter, type TokenCounter } from '../../tokens/token-counter.js';
import { countModelPartTokens } from '../../tokens/count-message-tokens.js';
import { isToolOutputPreview } from './preview-tool-output.js';
import { isToolInputPreview } from './preview-tool-input.js';

/** The first words of a shortened text of an older turn (a pasted log, a long answer). */
export const textPreviewMarker = '[agent-history: text shortened to fit the context window;';

/** The first words of the text that stands for a file of an older turn left out. */
export const filePreviewMarker = '[agent-history: file left out to fit the context window:';

type ContentPart = Exclude<ModelMessage['content'], string>[number];

const originals = new WeakMap<object, ContentPart>();

/** Whether the part is a preview this process made (cut from another part). */
export function isContentPreview(part: object): boolean {
  return originals.has(part);
}

/** The part a preview was cut from (the part itself when it is no preview). */
export function originalContentPart(part: ContentPart): ContentPart {
  return originals.get(part) ?? part;
}

/**
 * What identifies a text or file part of a stored message across steps and rebuilds: the message's sequence and a
 * hash of the original part (without provider options). Undefined for other parts.
 */
export function contentPartKey(sequence: number | null, part: ContentPart): string | undefined {
  const original = originalContentPart(part);
  if (sequence === null || (original.type !== 'text' && original.type !== 'file' && original.type !== 'image'))
    return undefined;
  const { providerOptions: _providerOptions, ...rest } = original as ContentPart & { providerOptions?: unknown };
  const value = rest.type === 'text' ? rest.text : JSON.stringify(rest);
  return `${sequence}:${createHash('sha256').update(value).digest('hex').slice(0, 24)}`;
}

/**
 * Shortens a text part to at most `maxTokens` raw tokens (a marked excerpt of its beginning), or replaces a file or
 * image part by a short text naming it. A text that fits is returned as it is; a preview of a preview is cut from
 * the original part.
 */
export function previewContentPart(part: ContentPart, maxTokens: number, tokenCounter: TokenCounter): ContentPart {
  const original = originalContentPart(part);
  // The same cut is asked for more than once in a compaction (the selection prices a turn shrunk, the trim then
  // shrinks it): made once per original part, size and counter id.
  const made = memoOfCounter(madePreviews, tokenCounter);
  let sizes = made.get(original);
  if (!sizes) made.set(original, (sizes = new Map()));
  let preview = sizes.get(maxTokens);
  if (!preview) sizes.set(maxTokens, (preview = cutContentPart(original, maxTokens, tokenCounter)));
  return preview;
}

const madePreviews = new Map<string, WeakMap<ContentPart, Map<number, ContentPart>>>();

function cutContentPart(original: ContentPart, maxTokens: number, tokenCounter: TokenCounter): ContentPart {
  let preview: ContentPart;
  if (original.type === 'text') {
    // Its count, from the stored per-part counts when the part was loaded with them.
    const total = countModelPartTokens(original, tokenCounter).text;
    if (total <= maxTokens) return original;
    // Never below 0: a negative size (a stored record may hold one) would slice from the end and never shrink to 0.
    let length = Math.max(0, Math.min(original.text.length, maxTokens * 4));
    for (;;) {
      if (length > 0 && isHighSurrogate(original.text.charCodeAt(length - 1))) length -= 1;
      const excerpt = original.text.slice(0, length);
      const text = `${textPreviewMarker} the first ${tokenCounter.count(excerpt)} of ${total} tokens are shown; the full text is in the conversation log.]\n${excerpt}`;
      preview = { type: 'text', text };
      if (tokenCounter.count(text) <= maxTokens || length === 0) break;
      length = Math.floor(length * 0.8);
    }
  } else if (original.type === 'file' || original.type === 'image') {
    const file = original as { mediaType?: string; filename?: string };
    preview = { type: 'text', text: `${filePreviewMarker} ${file.filename ?? file.mediaType ?? 'image'}.]` };
  } else return original;
  originals.set(preview, original);
  return preview;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Whether a message holds a preview the engine made (a tool output, a tool input or a content part): a step's copy
 * of such an unstored message must be taken back as the engine's own.
 */
export function holdsPreview(message: ModelMessage): boolean {
  if (typeof message.content === 'string') return false;
  for (const part of message.content as Array<{ type: string; output?: unknown; input?: unknown }>) {
    if (part.type === 'tool-result' && isToolOutputPreview(part.output)) return true;
    if (part.type === 'tool-call' && isToolInputPreview(part.input)) return true;
    if (isContentPreview(part)) return true;
  }
  return false;
}
