import type { StoredMessagePart } from '../schema/define-agent-tables.js';

/** The first words of a tool input or output the store kept as a preview, so neither model nor reader mistakes it. */
export const storedPreviewMarker = '[agent-history: stored preview of a tool';

/**
 * What the preview of a payload kept in the store's own table (`agent_tool_payload`) says it is kept as: a read
 * with `include: 'payloads'` puts the whole payload back, and `streamToolPayload` streams it.
 */
export const TOOL_PAYLOAD_REFERENCE = 'agent-history:tool-payload';

/** The field of a tool part that a payload is. */
export type ToolPayloadField = 'input' | 'output' | 'rawInput';

/** A tool input or output too large for its message, handed to `oversizedToolPayloads.store`. */
export interface OversizedToolPayload {
  /** The thread of the message. */
  threadId: string;
  /** The assistant message's id. */
  messageId: string;
  /** The tool call the payload belongs to. */
  toolCallId: string;
  /** Which field of the tool part it was. */
  field: ToolPayloadField;
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
   * Keeps the whole payload elsewhere (your blob store) instead of the store's `agent_tool_payload` table and
   * returns a reference that the preview then names. Called again with the same `messageId`, `toolCallId` and
   * `field` at every checkpoint that shortens it, so make it idempotent on that key.
   * @default none: the payload is kept in `agent_tool_payload`, chunked, and read back with `include: 'payloads'`
   * or `streamToolPayload`
   */
  store?: (payload: OversizedToolPayload) => Promise<string | undefined>;
}

/** The parts as they fit, and their size with `metadataBytes`. */
export interface FittedParts {
  /** The parts, their largest tool payloads replaced by previews until the message fits (or none is left). */
  parts: StoredMessagePart[];
  /** The stored size: parts and metadata as JSON, in UTF-8 bytes. */
  byteSize: number;
  /** The payloads shortened here that go to the store's own table (none when `store` keeps them). */
  kept: KeptToolPayload[];
}

/** A payload shortened by {@link fitAssistantParts} for the store's own table: where it was, and its JSON. */
export interface KeptToolPayload {
  /** The tool part's index in the parts. */
  part: number;
  field: ToolPayloadField;
  toolCallId: string;
  /** The payload's JSON text, whole. */
  json: string;
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
  const kept: KeptToolPayload[] = [];
  if (byteSize <= limit) return { parts, byteSize, kept };
  const candidates = parts
    .flatMap((part, index) => FIELDS.map((field) => ({ index, field, value: payloadOf(part, field) })))
    .filter((candidate) => candidate.value !== undefined && !isPreview(candidate.value))
    .map((candidate) => {
      const json = JSON.stringify(candidate.value);
      return { ...candidate, json, bytes: Buffer.byteLength(json) };
    })
    .sort((a, b) => b.bytes - a.bytes);
  const fitted = [...parts];
  const { previewCharacters = 2_000, store } = options;
  for (const candidate of candidates) {
    if (byteSize <= limit) break;
    const part = fitted[candidate.index] as StoredMessagePart & { toolCallId: string };
    const { field, value, json, bytes } = candidate;
    const reference =
      store === undefined
        ? TOOL_PAYLOAD_REFERENCE
        : await store({ threadId, messageId, toolCallId: part.toolCallId, field, value, byteSize: bytes });
    const preview = previewOf(field, value, bytes, previewCharacters, reference);
    const previewBytes = Buffer.byteLength(JSON.stringify(preview));
    if (previewBytes >= bytes) continue;
    fitted[candidate.index] = { ...part, [field]: preview };
    byteSize -= bytes - previewBytes;
    if (store === undefined) kept.push({ part: candidate.index, field, toolCallId: part.toolCallId, json });
  }
  return { parts: fitted, byteSize, kept };
}

function payloadOf(part: StoredMessagePart, field: (typeof FIELDS)[number]): unknown {
  const type = (part as { type: string }).type;
  if (!(type.startsWith('tool-') || type === 'dynamic-tool')) return undefined;
  return (part as Record<string, unknown>)[field];
}

function isPreview(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(storedPreviewMarker);
}

/** Whether `value` is a preview whose payload is kept in the store's own table (its first line says so). */
export function isTablePreview(value: unknown): boolean {
  if (!isPreview(value)) return false;
  const header = (value as string).slice(0, (value as string).indexOf(']\n') >>> 0);
  return header.endsWith(`kept as ${JSON.stringify(TOOL_PAYLOAD_REFERENCE)}`);
}

/** The preview of a payload: its size, where it is kept, and the first `characters` of its JSON. */
export function previewOf(
  field: string,
  value: unknown,
  byteSize: number,
  characters: number,
  reference?: string,
): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  let end = Math.min(characters, text.length);
  // Never cut a surrogate pair in two: Postgres refuses a lone surrogate.
  if (end > 0 && end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end -= 1;
  const kept =
    reference === undefined ? 'the rest was not kept' : `the whole ${field} is kept as ${JSON.stringify(reference)}`;
  return `${storedPreviewMarker} ${field} of ${byteSize} bytes, too large for the message; the first ${end} characters follow, ${kept}]\n${text.slice(0, end)}`;
}
