import { and, asc, eq, inArray } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { StoredMessage } from '../model/stored-rows.js';
import { isTablePreview } from './fit-assistant-parts.js';
import { inTenant, type StoreContext } from './store-context.js';
import { payloadDigest } from './tool-payload-rows.js';

/** What a read puts back into the messages it returns: `'payloads'`, the tool payloads kept whole. */
export type MessageInclude = 'payloads';

/** `include`, checked: undefined, or `'payloads'`. */
export function assertInclude(include: unknown): MessageInclude | undefined {
  if (include === undefined || include === 'payloads') return include;
  throw new InvalidArgumentError({ argument: 'options.include', value: include, message: "expected 'payloads'." });
}

/** The rows of one payload, in chunk order, as {@link withToolPayloads} reads them. */
interface PayloadRow {
  messageId: string;
  part: number;
  field: string;
  chunk: number;
  chunkCount: number;
  digest: string;
  content: string;
}

/**
 * `messages` with each preview of a payload kept in `agent_tool_payload` replaced by the whole payload, read in
 * one transaction. A payload whose chunks are not all there, or do not hash to their digest (it was redacted or
 * rewritten after the messages were read), keeps its preview: a read never returns a payload in part.
 */
export async function withToolPayloads(context: StoreContext, messages: StoredMessage[]): Promise<StoredMessage[]> {
  const withPreviews = messages.filter((stored) =>
    stored.message.parts.some((part) =>
      ['input', 'output', 'rawInput'].some((field) => isTablePreview((part as Record<string, unknown>)[field])),
    ),
  );
  if (withPreviews.length === 0) return messages;
  const { agentToolPayload: payload } = context.tables;
  const rows: PayloadRow[] = await inTenant(context, (tx) =>
    tx
      .select({
        messageId: payload.messageId,
        part: payload.part,
        field: payload.field,
        chunk: payload.chunk,
        chunkCount: payload.chunkCount,
        digest: payload.digest,
        content: payload.content,
      })
      .from(payload)
      .where(
        and(
          eq(payload.tenantId, context.tenantId),
          inArray(
            payload.messageId,
            withPreviews.map((stored) => stored.rowId),
          ),
        ),
      )
      .orderBy(asc(payload.messageId), asc(payload.part), asc(payload.field), asc(payload.chunk)),
  );
  const values = assemble(rows);
  return messages.map((stored) => {
    if (!values.has(stored.rowId)) return stored;
    const parts = stored.message.parts.map((part, index) => {
      let whole = part as Record<string, unknown>;
      for (const field of ['input', 'output', 'rawInput']) {
        const value = values.get(stored.rowId)!.get(`${index}:${field}`);
        if (value !== undefined && isTablePreview(whole[field])) whole = { ...whole, [field]: value.value };
      }
      return whole as typeof part;
    });
    return { ...stored, message: { ...stored.message, parts } };
  });
}

/** The whole payloads of `rows` by message row id and `part:field`; an incomplete or mismatched one is left out. */
function assemble(rows: PayloadRow[]): Map<string, Map<string, { value: unknown }>> {
  const byMessage = new Map<string, Map<string, { value: unknown }>>();
  for (let start = 0; start < rows.length;) {
    const head = rows[start]!;
    let end = start;
    while (end < rows.length && rows[end]!.messageId === head.messageId && keyOf(rows[end]!) === keyOf(head)) end++;
    const chunks = rows.slice(start, end);
    start = end;
    const complete = chunks.length === head.chunkCount && chunks.every((row, index) => row.chunk === index);
    const json = chunks.map((row) => row.content).join('');
    if (!complete || payloadDigest(json) !== head.digest) continue;
    const payloads = byMessage.get(head.messageId) ?? new Map<string, { value: unknown }>();
    payloads.set(keyOf(head), { value: JSON.parse(json) });
    byMessage.set(head.messageId, payloads);
  }
  return byMessage;
}

const keyOf = (row: { part: number; field: string }) => `${row.part}:${row.field}`;
