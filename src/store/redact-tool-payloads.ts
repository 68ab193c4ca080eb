import { and, asc, eq } from 'drizzle-orm';
import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { previewOf, TOOL_PAYLOAD_REFERENCE, type ToolPayloadField } from './fit-assistant-parts.js';
import { replaceSpans } from './replace-spans.js';
import type { StoreContext } from './store-context.js';
import { deleteToolPayloads, insertPayload } from './tool-payload-rows.js';

/** The new previews of a redacted message's payloads, by part index and field. */
export type RedactedPreviews = Map<number, Partial<Record<ToolPayloadField, string>>>;

/**
 * Redacts the payloads the message row `messageRowId` keeps in `agent_tool_payload`, in the caller's transaction:
 * a whole-message redaction (`spans` undefined) deletes them; with spans, each payload is read whole, scrubbed as
 * the parts are ({@link replaceSpans}) and written again, and its preview is made anew from the scrubbed payload, so
 * that no piece of a span survives at the preview's cut. Returns those previews (none for a whole-message one).
 */
export async function redactToolPayloads(
  context: StoreContext,
  tx: TenantTransaction,
  messageRowId: string,
  { spans, replacement }: { spans: string[] | undefined; replacement: string },
): Promise<RedactedPreviews> {
  const previews: RedactedPreviews = new Map();
  if (spans === undefined) {
    await deleteToolPayloads(context, tx, messageRowId);
    return previews;
  }
  const { agentToolPayload: payload } = context.tables;
  const ofMessage = and(eq(payload.tenantId, context.tenantId), eq(payload.messageId, messageRowId));
  const heads = await tx
    .select({
      threadId: payload.threadId,
      userId: payload.userId,
      part: payload.part,
      field: payload.field,
      toolCallId: payload.toolCallId,
    })
    .from(payload)
    .where(and(ofMessage, eq(payload.chunk, 0)))
    .orderBy(asc(payload.part), asc(payload.field));
  for (const head of heads) {
    const field = head.field as ToolPayloadField;
    const ofPayload = and(ofMessage, eq(payload.part, head.part), eq(payload.field, field));
    const chunks = await tx
      .select({ content: payload.content })
      .from(payload)
      .where(ofPayload)
      .orderBy(asc(payload.chunk));
    const value = replaceSpans(JSON.parse(chunks.map((chunk) => chunk.content).join('')), spans, replacement);
    const json = JSON.stringify(value);
    await tx.delete(payload).where(ofPayload);
    await insertPayload(context, tx, { ...head, field, messageRowId, json });
    const characters = context.oversizedToolPayloads.previewCharacters ?? 2_000;
    const preview = previewOf(field, value, Buffer.byteLength(json), characters, TOOL_PAYLOAD_REFERENCE);
    previews.set(head.part, { ...previews.get(head.part), [field]: preview });
  }
  return previews;
}

/** `parts` with the previews of {@link redactToolPayloads} in place of the ones they had. */
export function withRedactedPreviews(parts: StoredMessagePart[], previews: RedactedPreviews): StoredMessagePart[] {
  if (previews.size === 0) return parts;
  return parts.map((part, index) => {
    const fields = previews.get(index);
    return fields === undefined ? part : { ...part, ...fields };
  });
}
