import { createHash } from 'node:crypto';
import { and, eq, notInArray, sql } from 'drizzle-orm';
import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { isTablePreview, type KeptToolPayload, type ToolPayloadField } from './fit-assistant-parts.js';
import type { StoreContext } from './store-context.js';

/**
 * The most UTF-16 code units of a payload's JSON in one `agent_tool_payload` row: a streaming reader holds one
 * chunk at a time (at most three bytes per unit as UTF-8), and a write sends {@link CHUNKS_PER_INSERT} per statement.
 */
export const PAYLOAD_CHUNK_CHARACTERS = 262_144;
const CHUNKS_PER_INSERT = 8;

/**
 * `json` cut into chunks of at most `size` code units (`size + 1` when a surrogate pair would otherwise be cut with
 * `size` 1), never between the two halves of a surrogate pair.
 */
export function chunkText(json: string, size = PAYLOAD_CHUNK_CHARACTERS): string[] {
  const chunks: string[] = [];
  for (let start = 0; start < json.length || chunks.length === 0;) {
    let end = Math.min(start + size, json.length);
    // A pair is never cut (Postgres refuses a lone surrogate): its high half goes into the next chunk with its low
    // half, or, when it is the chunk's only unit, both stay in this one.
    if (end < json.length && /[\ud800-\udbff]/.test(json[end - 1]!)) end += end - 1 > start ? -1 : 1;
    chunks.push(json.slice(start, end));
    start = end;
  }
  return chunks;
}

/** The hex SHA-256 of a payload's JSON: the same on each of its rows, so a reader knows its chunks are one payload. */
export function payloadDigest(json: string): string {
  return createHash('sha256').update(json).digest('hex');
}

/** The `part:field` key of a payload within its message. */
const keyOf = (part: number, field: string) => `${part}:${field}`;

/** The `part:field` keys of the payload rows that `parts` refer to (their previews name the table). */
export function referencedPayloadKeys(parts: readonly StoredMessagePart[]): string[] {
  return parts.flatMap((part, index) =>
    (['input', 'output', 'rawInput'] as const)
      .filter((field) => isTablePreview((part as Record<string, unknown>)[field]))
      .map((field) => keyOf(index, field)),
  );
}

/**
 * Brings the payload rows of the message `messageRowId` in line with its new parts, in the caller's transaction
 * (after the message row was updated, so its lock orders concurrent writers): each payload in `kept` is written
 * unless the same payload (same digest) is already there; the rows of a part field whose value is no longer a
 * preview of this table are deleted. A retried checkpoint or finalize therefore writes nothing twice.
 */
export async function writeToolPayloads(
  context: StoreContext,
  tx: TenantTransaction,
  { messageRowId, parts, kept }: { messageRowId: string; parts: StoredMessagePart[]; kept: KeptToolPayload[] },
): Promise<void> {
  const { agentToolPayload: payload, agentMessage } = context.tables;
  const ofMessage = and(eq(payload.tenantId, context.tenantId), eq(payload.messageId, messageRowId));
  const referenced = referencedPayloadKeys(parts);
  const stale = sql`(${payload.part}::text || ':' || ${payload.field})`;
  await tx.delete(payload).where(and(ofMessage, referenced.length === 0 ? undefined : notInArray(stale, referenced)));
  if (kept.length === 0) return;
  const stored = await tx
    .select({ part: payload.part, field: payload.field, digest: payload.digest })
    .from(payload)
    .where(and(ofMessage, eq(payload.chunk, 0)));
  const [message] = await tx
    .select({ threadId: agentMessage.threadId, userId: agentMessage.userId })
    .from(agentMessage)
    .where(and(eq(agentMessage.tenantId, context.tenantId), eq(agentMessage.id, messageRowId)));
  for (const { part, field, toolCallId, json } of kept) {
    const digest = payloadDigest(json);
    const same = stored.find((row) => row.part === part && row.field === field);
    if (same?.digest === digest) continue;
    if (same) await tx.delete(payload).where(and(ofMessage, eq(payload.part, part), eq(payload.field, field)));
    await insertPayload(context, tx, {
      threadId: message!.threadId,
      userId: message!.userId,
      messageRowId,
      part,
      field,
      toolCallId,
      json,
      digest,
    });
  }
}

/** Writes one payload's chunks, {@link CHUNKS_PER_INSERT} rows per statement. */
export async function insertPayload(
  context: StoreContext,
  tx: TenantTransaction,
  row: {
    threadId: string;
    userId: string | null;
    messageRowId: string;
    part: number;
    field: ToolPayloadField;
    toolCallId: string;
    json: string;
    digest?: string;
  },
): Promise<void> {
  const chunks = chunkText(row.json);
  const common = {
    tenantId: context.tenantId,
    threadId: row.threadId,
    userId: row.userId,
    messageId: row.messageRowId,
    part: row.part,
    field: row.field,
    toolCallId: row.toolCallId,
    chunkCount: chunks.length,
    byteSize: Buffer.byteLength(row.json),
    digest: row.digest ?? payloadDigest(row.json),
  };
  for (let first = 0; first < chunks.length; first += CHUNKS_PER_INSERT) {
    const values = chunks
      .slice(first, first + CHUNKS_PER_INSERT)
      .map((content, offset) => ({ ...common, chunk: first + offset, content }));
    await tx.insert(context.tables.agentToolPayload).values(values);
  }
}

/** Deletes every payload of the message row `messageRowId` (a whole-message redaction leaves none). */
export async function deleteToolPayloads(
  context: StoreContext,
  tx: TenantTransaction,
  messageRowId: string,
): Promise<void> {
  const { agentToolPayload: payload } = context.tables;
  await tx.delete(payload).where(and(eq(payload.tenantId, context.tenantId), eq(payload.messageId, messageRowId)));
}

/**
 * Copies the payloads of the source thread's messages `1..atSequence` to the fork's copies of them (whose row ids
 * `forkThread` derives from the new thread's id and the source row's id), in one `INSERT … SELECT` that Citus runs
 * on the worker holding the tenant.
 */
export async function copyToolPayloads(
  context: StoreContext,
  tx: TenantTransaction,
  { sourceThreadId, newThreadId, atSequence, userId }: ForkCopy,
): Promise<void> {
  const { agentToolPayload: payload, agentMessage: message } = context.tables;
  // Each table filtered by its own tenant_id (no aliases), so the statement visibly routes to one tenant.
  await tx.execute(sql`
    insert into ${payload} (tenant_id, thread_id, message_id, user_id, part, tool_call_id, field, chunk, chunk_count,
      byte_size, digest, content, created_at)
    select ${payload.tenantId}, ${newThreadId}::uuid, md5(${newThreadId}::text || ':' || ${payload.messageId}::text)::uuid,
      ${userId}::text, ${payload.part}, ${payload.toolCallId}, ${payload.field}, ${payload.chunk}, ${payload.chunkCount},
      ${payload.byteSize}, ${payload.digest}, ${payload.content}, ${payload.createdAt}
    from ${payload}
    join ${message} on ${message.tenantId} = ${payload.tenantId} and ${message.id} = ${payload.messageId}
    where ${payload.tenantId} = ${context.tenantId} and ${message.tenantId} = ${context.tenantId}
      and ${payload.threadId} = ${sourceThreadId} and ${message.threadId} = ${sourceThreadId}
      and ${message.sequence} <= ${atSequence}`);
}

/** What {@link copyToolPayloads} copies: the source thread's payloads up to `atSequence`, into the new thread. */
interface ForkCopy {
  sourceThreadId: string;
  newThreadId: string;
  atSequence: number;
  userId: string | null;
}
