import { and, asc, eq } from 'drizzle-orm';
import { assertThreadId } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { ToolPayloadField } from './fit-assistant-parts.js';
import { ofThread } from './of-thread.js';
import { requireThread } from './require-thread.js';
import { inTenant, type StoreContext } from './store-context.js';
import { asStoreError } from './with-store-errors.js';

/** The options of `streamToolPayload`. */
export interface StreamToolPayloadOptions {
  /** The tool call whose payload to stream (its part's `toolCallId`). */
  toolCallId: string;
  /** Which field of the tool part. @default 'output' */
  field?: ToolPayloadField;
}

/** One payload kept in `agent_tool_payload`, as `streamToolPayload` returns it. */
export interface ToolPayloadStream {
  /** The tool call of the payload. */
  toolCallId: string;
  /** Which field of the tool part it is. */
  field: ToolPayloadField;
  /** The payload's size as JSON, in UTF-8 bytes. */
  byteSize: number;
  /** How many chunks `stream` yields. */
  chunkCount: number;
  /**
   * The payload's JSON text, chunk by chunk (each read in a transaction of its own when the consumer asks for it, so
   * memory stays at a chunk or two whatever the size); `JSON.parse` of the chunks joined is the payload. Errors
   * with {@link NotFoundError} if the payload is redacted or rewritten while it is read.
   */
  stream: ReadableStream<string> & AsyncIterable<string>;
}

const FIELDS: readonly string[] = ['input', 'output', 'rawInput'];

/**
 * Streams one tool payload of a message that the store kept in `agent_tool_payload` (its part holds a preview):
 * found by the message's `UIMessage.id`, the tool call id and the field. Another tenant's or user's payload is
 * "not found", exactly like a missing one.
 */
export async function streamToolPayload(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { toolCallId, field = 'output' }: StreamToolPayloadOptions,
): Promise<ToolPayloadStream> {
  const thread = assertThreadId(threadId);
  if (typeof toolCallId !== 'string' || toolCallId.length === 0)
    throw new InvalidArgumentError({
      argument: 'options.toolCallId',
      value: toolCallId,
      message: 'expected a string.',
    });
  if (!FIELDS.includes(field))
    throw new InvalidArgumentError({
      argument: 'options.field',
      value: field,
      message: 'expected input, output or rawInput.',
    });
  const head = await payloadHead(context, thread, String(messageId), toolCallId, field);
  const { agentToolPayload: payload } = context.tables;
  let next = 0;
  const readChunk = (chunk: number) =>
    inTenant(context, async (tx) => {
      const [row] = await tx
        .select({ content: payload.content, digest: payload.digest })
        .from(payload)
        .where(
          and(
            eq(payload.tenantId, context.tenantId),
            eq(payload.messageId, head.messageRowId),
            eq(payload.part, head.part),
            eq(payload.field, field),
            eq(payload.chunk, chunk),
          ),
        );
      // Gone, or another payload's chunk: the payload was redacted or rewritten since the stream began.
      if (row?.digest !== head.digest) throw new NotFoundError({ entity: 'tool-payload', id: toolCallId });
      return row.content;
    });
  const stream = new ReadableStream<string>(
    {
      async pull(controller) {
        if (next === head.chunkCount) return controller.close();
        try {
          controller.enqueue(await readChunk(next++));
        } catch (error) {
          controller.error(asStoreError(error));
        }
      },
    },
    { highWaterMark: 1 },
  );
  // Node's web streams are async iterable (`for await`), as the AI SDK's streams are typed.
  const iterable = stream as ReadableStream<string> & AsyncIterable<string>;
  return { toolCallId, field, byteSize: head.byteSize, chunkCount: head.chunkCount, stream: iterable };
}

/** The first chunk's facts of the payload, and its message's row id; {@link NotFoundError} when there is none. */
function payloadHead(
  context: StoreContext,
  thread: string,
  messageId: string,
  toolCallId: string,
  field: ToolPayloadField,
) {
  const { agentMessage, agentToolPayload: payload } = context.tables;
  return inTenant(context, async (tx) => {
    await requireThread(context, tx, thread);
    const [message] = await tx
      .select({ id: agentMessage.id })
      .from(agentMessage)
      .where(and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, messageId)));
    if (!message) throw new NotFoundError({ entity: 'message', id: messageId });
    const [row] = await tx
      .select({
        part: payload.part,
        chunkCount: payload.chunkCount,
        byteSize: payload.byteSize,
        digest: payload.digest,
      })
      .from(payload)
      .where(
        and(
          eq(payload.tenantId, context.tenantId),
          eq(payload.messageId, message.id),
          eq(payload.toolCallId, toolCallId),
          eq(payload.field, field),
          eq(payload.chunk, 0),
        ),
      )
      .orderBy(asc(payload.part))
      .limit(1);
    if (!row) throw new NotFoundError({ entity: 'tool-payload', id: toolCallId });
    return { ...row, messageRowId: message.id };
  });
}
