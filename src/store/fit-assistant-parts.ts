import type { StoredMessagePart } from '../schema/define-agent-tables.js';

/** The first words of a tool input or output the store kept as a preview, so neither model nor reader mistakes it. */
export const storedPreviewMarker = '[agent-history: stored preview of a tool';

/** A tool input or output too large for its message, handed to `oversizedToolPayloads.store`. */
export interface OversizedToolPayload {
  /** The thread of the message. */
  threadId: string;
  /** The assistant message's id. */
  messageId: string;
  /** The tool call the payload belongs to. */
  toolCallId: string;
  /** Which field of the tool part it was. */
  field: 'input' | 'output' | 'rawInput';
  /** The payload, whole. */
  value: unknown;
  /** Its size as JSON, in UTF-8 bytes. */
  byteSize: number;
}

/** How an assistant message larger than `maxMessageBytes` is made to fit. */
export interface OversizedToolPayloadOptions {
  /** How many characters of the payload's JSON the preview keeps. @default 2_000 */
  previewCharacters?: number;
  /**
   * Keeps the whole payload elsewhere (your blob store, a table of yours) and returns a reference that the
   * preview then names. Called again with the same `messageId`, `toolCallId` and `field` at every checkpoint that
   * shortens it, so make it idempotent on that key. @default none: only the preview is kept
   */
  store?: (payload: OversizedToolPayload) => Promise<string | undefined>;
}

/** The parts as they fit, and their size with `metadataBytes`. */
export interface FittedParts {
  /** The parts, their largest tool payloads replaced by previews until the message fits (or none is left). */
  parts: StoredMessagePart[];
  /** The stored size: parts and metadata as JSON, in UTF-8 bytes. */
  byteSize: number;
}

const FIELDS = ['output', 'input', 'rawInput'] as const;

/**
 * Fits an assistant message the model produced into `limit` bytes without refusing it: its largest tool inputs
 * and outputs are replaced, largest first, by a string that starts with {@link storedPreviewMarker}, says the
 * payload's size (and where it is kept, when `store` keeps it) and continues with the beginning of its JSON.
 * Text is never shortened: a message still over the limit once no payload is left to shorten is stored as it is,
 * since the user has seen it (the limit guards what clients send, not what the model wrote).
 */
export async function fitAssistantParts(
  parts: StoredMessagePart[],
  {
    limit,
    metadataBytes,
    threadId,
    messageId,
    options = {},
  }: {
    limit: number;
    metadataBytes: number;
    threadId: string;
    messageId: string;
    options?: OversizedToolPayloadOptions;
  },
): Promise<FittedParts> {
  let byteSize = Buffer.byteLength(JSON.stringify(parts)) + metadataBytes;
  if (byteSize <= limit) return { parts, byteSize };
  const candidates = parts
    .flatMap((part, index) => FIELDS.map((field) => ({ index, field, value: payloadOf(part, field) })))
    .filter((candidate) => candidate.value !== undefined && !isPreview(candidate.value))
    .map((candidate) => ({ ...candidate, bytes: Buffer.byteLength(JSON.stringify(candidate.value)) }))
    .sort((a, b) => b.bytes - a.bytes);
  const fitted = [...parts];
  const { previewCharacters = 2_000, store } = options;
  for (const candidate of candidates) {
    if (byteSize <= limit) break;
    const part = fitted[candidate.index] as StoredMessagePart & { toolCallId: string };
    const reference = await store?.({
      threadId,
      messageId,
      toolCallId: part.toolCallId,
      field: candidate.field,
      value: candidate.value,
      byteSize: candidate.bytes,
    });
    const preview = previewOf(candidate.field, candidate.value, candidate.bytes, previewCharacters, reference);
    const previewBytes = Buffer.byteLength(JSON.stringify(preview));
    if (previewBytes >= candidate.bytes) continue;
    fitted[candidate.index] = { ...part, [candidate.field]: preview };
    byteSize -= candidate.bytes - previewBytes;
  }
  return { parts: fitted, byteSize };
}

function payloadOf(part: StoredMessagePart, field: (typeof FIELDS)[number]): unknown {
  const type = (part as { type: string }).type;
  if (!(type.startsWith('tool-') || type === 'dynamic-tool')) return undefined;
  return (part as Record<string, unknown>)[field];
}

function isPreview(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(storedPreviewMarker);
}

function previewOf(field: string, value: unknown, byteSize: number, characters: number, reference?: string): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  let end = Math.min(characters, text.length);
  // Never cut a surrogate pair in two: Postgres refuses a lone surrogate.
  if (end > 0 && end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end -= 1;
  const kept =
    reference === undefined ? 'the rest was not kept' : `the whole ${field} is kept as ${JSON.stringify(reference)}`;
  return `${storedPreviewMarker} ${field} of ${byteSize} bytes, too large for the message; the first ${end} characters follow, ${kept}]\n${text.slice(0, end)}`;
}
