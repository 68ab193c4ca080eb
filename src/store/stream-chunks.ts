import { and, asc, eq, gte, inArray, lt, notInArray } from 'drizzle-orm';
import { assertInteger, assertThreadId } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { MessageStatus } from '../model/stored-rows.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { ofThread } from './of-thread.js';
import { inTenant, type StoreContext } from './store-context.js';
import { notifyStreamChunks } from './stream-notifications.js';

/** The options of `appendStreamChunks`. */
export interface AppendStreamChunksOptions {
  /** The batch's place in the stream: 0 for the first, then 1, 2… without gaps. */
  batch: number;
  /** The batch's chunks (JSON values: UI message chunks). */
  chunks: readonly unknown[];
  /** Whether this is the stream's last batch. @default false */
  final?: boolean;
}

/** One stored batch of a message's stream. */
export interface StreamChunkBatch {
  /** The batch's place in the stream. */
  batch: number;
  /** Its chunks, as they were appended. */
  chunks: unknown[];
  /** Whether it is the stream's last batch. */
  final: boolean;
}

/** The options of `readStreamChunks`. */
export interface ReadStreamChunksOptions {
  /** The first batch to read. @default 0 */
  fromBatch?: number;
  /** How many batches to read at most. @default 100 */
  limit?: number;
}

/** What `readStreamChunks` returns: the batches from `fromBatch` on, and the message's status read with them. */
export interface StreamChunkPage {
  /** The batches, in order (a gap means the log was deleted meanwhile). */
  batches: StreamChunkBatch[];
  /** The message's status in the same transaction. */
  status: MessageStatus;
}

/** The options of `deleteStreamChunks`. */
export interface DeleteStreamChunksOptions {
  /** Only this message's log (its client id). @default every finished message's log in the thread */
  messageId?: string;
  /** Only batches written before this time. @default now */
  before?: Date;
}

const ACTIVE: MessageStatus[] = ['pending', 'streaming'];

/**
 * Appends one batch of an assistant message's stream to its chunk log and notifies the readers (`pg_notify`, sent
 * at commit). Idempotent: a retried batch is kept as first written. A batch of a redacted message is dropped: its
 * log was deleted by the redaction and stays empty.
 */
export async function appendStreamChunks(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { batch, chunks, final = false }: AppendStreamChunksOptions,
): Promise<void> {
  const thread = assertThreadId(threadId);
  const id = assertClientMessageId(messageId);
  assertInteger('options.batch', batch, 0, 2_147_483_647);
  if (!Array.isArray(chunks))
    throw new InvalidArgumentError({ argument: 'options.chunks', value: chunks, message: 'expected an array.' });
  if (typeof final !== 'boolean')
    throw new InvalidArgumentError({ argument: 'options.final', value: final, message: 'expected a boolean.' });
  const text = JSON.stringify(chunks);
  const { agentStreamChunk, agentMessage } = context.tables;
  await inTenant(context, async (tx) => {
    // Locked for share: a redaction (which locks the message for update and deletes its log) either finishes first,
    // and this batch sees the message redacted, or waits for this batch and deletes it with the rest of the log.
    const [message] = await tx
      .select({ id: agentMessage.id, userId: agentMessage.userId, contextState: agentMessage.contextState })
      .from(agentMessage)
      .where(
        and(
          ofThread(context, agentMessage, thread),
          eq(agentMessage.messageId, id),
          eq(agentMessage.role, 'assistant'),
        ),
      )
      .for('share');
    if (!message) throw new NotFoundError({ entity: 'message', id });
    // A redacted answer keeps no log: the rest of its stream is dropped, as the redaction dropped the batches before.
    if (message.contextState === 'redacted') return;
    await tx
      .insert(agentStreamChunk)
      .values({
        tenantId: context.tenantId,
        threadId: thread,
        userId: message.userId,
        messageId: message.id,
        batch,
        chunks: text,
        final,
      })
      .onConflictDoNothing();
    await notifyStreamChunks(tx, context.tenantId, thread, id);
  });
}

/** Reads a message's stream batches from `fromBatch` on, with the message's status, in one transaction. */
export async function readStreamChunks(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { fromBatch = 0, limit = 100 }: ReadStreamChunksOptions = {},
): Promise<StreamChunkPage> {
  const thread = assertThreadId(threadId);
  const id = assertClientMessageId(messageId);
  assertInteger('options.fromBatch', fromBatch, 0, 2_147_483_647);
  assertInteger('options.limit', limit, 1, 1000);
  const { agentStreamChunk } = context.tables;
  return inTenant(context, async (tx) => {
    const { rowId, status } = await rowIdOf(context, tx, thread, id);
    const rows = await tx
      .select({ batch: agentStreamChunk.batch, chunks: agentStreamChunk.chunks, final: agentStreamChunk.final })
      .from(agentStreamChunk)
      .where(
        and(
          eq(agentStreamChunk.tenantId, context.tenantId),
          eq(agentStreamChunk.messageId, rowId),
          gte(agentStreamChunk.batch, fromBatch),
        ),
      )
      .orderBy(asc(agentStreamChunk.batch))
      .limit(limit);
    return {
      status,
      batches: rows.map((row) => ({ batch: row.batch, final: row.final, chunks: JSON.parse(row.chunks) as unknown[] })),
    };
  });
}

/**
 * Deletes chunk logs of a thread: one message's (`messageId`), or every log whose message is no longer pending or
 * streaming; only batches written before `before` when it is given. Returns how many batches were deleted.
 */
export async function deleteStreamChunks(
  context: StoreContext,
  threadId: string,
  { messageId, before }: DeleteStreamChunksOptions = {},
): Promise<number> {
  const thread = assertThreadId(threadId);
  const id = messageId === undefined ? undefined : assertClientMessageId(messageId);
  if (before !== undefined && !(before instanceof Date && Number.isFinite(before.getTime())))
    throw new InvalidArgumentError({ argument: 'options.before', value: before, message: 'expected a valid Date.' });
  const { agentStreamChunk, agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    const messages = tx
      .select({ id: agentMessage.id })
      .from(agentMessage)
      .where(
        and(
          ofThread(context, agentMessage, thread),
          id === undefined ? notInArray(agentMessage.status, ACTIVE) : eq(agentMessage.messageId, id),
        ),
      );
    const deleted = await tx
      .delete(agentStreamChunk)
      .where(
        and(
          ofThread(context, agentStreamChunk, thread),
          inArray(agentStreamChunk.messageId, messages),
          before === undefined ? undefined : lt(agentStreamChunk.createdAt, before),
        ),
      )
      .returning({ batch: agentStreamChunk.batch });
    return deleted.length;
  });
}

async function rowIdOf(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
  messageId: string,
): Promise<{ rowId: string; status: MessageStatus }> {
  const { agentMessage } = context.tables;
  const [row] = await tx
    .select({ rowId: agentMessage.id, status: agentMessage.status })
    .from(agentMessage)
    .where(
      and(
        ofThread(context, agentMessage, threadId),
        eq(agentMessage.messageId, messageId),
        eq(agentMessage.role, 'assistant'),
      ),
    );
  if (!row) throw new NotFoundError({ entity: 'message', id: messageId });
  return row;
}

// A message id the store cannot hold cannot have a log: the same NotFoundError as a missing message.
function assertClientMessageId(messageId: unknown): string {
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 200)
    throw new NotFoundError({ entity: 'message', id: messageId });
  return messageId;
}
