import { and, eq, sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import { appendMessage, type AppendResult } from './append-message.js';
import { storedTokenCount } from './stored-token-count.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { deferredSearchVector } from './search-indexing.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertThreadId } from '../errors/assert-input.js';
import type { MessageStatus, StoredMessage } from '../model/stored-rows.js';
import { validateMetadata, validateParts } from './validate-message.js';
import { runMessageCheck } from './message-check.js';
import { ofThread } from './of-thread.js';
import { fitAnswer } from './fit-answer.js';
import { explainMissing, stillStreaming } from './answer-refusal.js';
import { writeToolPayloads } from './tool-payload-rows.js';
import { IN_TRANSACTION } from './one-statement-call.js';
import { checkFinishRun, finishRunIn } from './run-finish.js';
import type { FinishRunOptions } from './runs.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { writeAnswerInOneStatement } from './write-answer.js';

/** The options of `beginAssistantMessage`. */
export interface BeginAssistantMessageOptions {
  /** The `UIMessage.id` the stream will use (pass the same id to `generateMessageId`). */
  messageId: string;
  /** The run that produces the message (a uuid of the same thread's run). @default null */
  runId?: string;
  /** An idempotency key, as for `appendMessage`. @default null */
  clientRequestId?: string;
  /** The message's metadata. @default {} */
  metadata?: StoredMetadata;
}

/**
 * Appends an empty assistant message in `pending` state, holding a lease for `leaseMs`. Idempotent: a retry gets
 * the assistant message back; a message id or key held by a user or system message is an
 * {@link InvalidArgumentError} naming it (never that message, as if it were the answer).
 */
export async function beginAssistantMessage(
  context: StoreContext,
  threadId: string,
  options: BeginAssistantMessageOptions,
): Promise<AppendResult> {
  const result = await appendMessage(
    context,
    threadId,
    { id: options.messageId, role: 'assistant', parts: [], metadata: options.metadata },
    { status: 'pending', runId: options.runId, clientRequestId: options.clientRequestId },
  );
  const { role, id } = result.stored.message;
  if (result.created || role === 'assistant') return result;
  const byId = id === options.messageId;
  throw new InvalidArgumentError({
    argument: byId ? 'options.messageId' : 'options.clientRequestId',
    value: byId ? options.messageId : options.clientRequestId,
    message: `is held by a ${role} message of the thread, not an assistant message.`,
  });
}

/** How an assistant message ends: `cancelled` for an abort (its partial parts are kept). */
export type FinalStatus = Extract<MessageStatus, 'completed' | 'failed' | 'cancelled'>;

/** The options of `checkpointMessage`. */
export interface CheckpointMessageOptions {
  /** Every part streamed so far (they replace the stored parts). */
  parts: StoredMessagePart[];
  /** The message's metadata, replacing the stored one. @default the stored metadata, unchanged */
  metadata?: StoredMetadata;
}

/** The options of `finalizeMessage`. */
export interface FinalizeMessageOptions {
  /** How the message ended. */
  status: FinalStatus;
  /** The message's final parts (they replace the stored parts). */
  parts: StoredMessagePart[];
  /** The message's metadata, replacing the stored one. @default the stored metadata, unchanged */
  metadata?: StoredMetadata;
  /**
   * Finishes the message's run with it, in the same statement: the run ends with the message's `status` and these
   * options of `finishRun` (a run finished already stays as it was). A run that is not of this thread is a
   * `NotFoundError`, and nothing is written. @default the run is left as it is
   */
  finishRun?: { runId: string } & Omit<FinishRunOptions, 'status'>;
}

function assertMessageId(messageId: unknown): string {
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 200) {
    throw new NotFoundError({ entity: 'message', id: messageId });
  }
  return messageId;
}

/**
 * Saves the parts streamed so far (status `streaming`) and renews the lease, so a crash loses at most what
 * came after the last checkpoint. Only a `pending` or `streaming` message can be checkpointed (or finalized), and
 * not once it has been redacted.
 */
export async function checkpointMessage(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { parts, metadata }: CheckpointMessageOptions,
): Promise<StoredMessage> {
  const thread = assertThreadId(threadId);
  const id = assertMessageId(messageId);
  const validMetadata = metadata === undefined ? undefined : validateMetadata(metadata);
  const validParts = validateParts(parts, 'assistant');
  await runMessageCheck(
    context.checkMessage,
    { id, role: 'assistant', parts: validParts, metadata: validMetadata },
    'checkpoint',
  );
  const fitted = await fitAnswer(context, thread, id, validParts, validMetadata);
  const leaseExpiresAt = new Date(context.now().getTime() + context.leaseMs);
  const written = await writeAnswerInOneStatement(context, {
    thread,
    messageId: id,
    status: 'streaming',
    parts: fitted.parts,
    metadata: validMetadata,
    byteSize: fitted.byteSize,
    tokenCount: null,
    tokenCounterId: null,
    partTokenCounts: null,
    leaseExpiresAt,
    kept: fitted.kept,
  });
  if (written !== null && written !== IN_TRANSACTION) return written;
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .update(agentMessage)
      .set({
        parts: fitted.parts,
        ...(validMetadata === undefined ? {} : { metadata: validMetadata }),
        status: 'streaming',
        ...deferredSearchVector(context),
        byteSize: fitted.byteSize,
        // The parts change: a count taken before (a reopened message's) no longer fits them. Finalizing counts again.
        tokenCount: null,
        tokenCounterId: null,
        partTokenCounts: null,
        leaseExpiresAt,
        updatedAt: sql`now()`,
      })
      .where(stillStreaming(context, thread, id))
      .returning(messageColumns(context.tables));
    if (!row) throw await explainMissing(context, tx, thread, id, 'checkpointed');
    await writeToolPayloads(context, tx, { messageRowId: row.id, parts: fitted.parts, kept: fitted.kept });
    return toStoredMessage(row);
  });
}

/**
 * Ends an assistant message: `completed`, `failed` or `cancelled` (an abort keeps the partial parts). The token
 * count is taken now. Finalizing again with the same status returns the stored message (a retried `onEnd`).
 */
export async function finalizeMessage(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { status, parts, metadata, finishRun }: FinalizeMessageOptions,
): Promise<StoredMessage> {
  const thread = assertThreadId(threadId);
  const id = assertMessageId(messageId);
  if (status !== 'completed' && status !== 'failed' && status !== 'cancelled') {
    throw new InvalidArgumentError({
      argument: 'status',
      value: status,
      message: 'expected completed, failed or cancelled.',
    });
  }
  const validMetadata = metadata === undefined ? undefined : validateMetadata(metadata);
  const run =
    finishRun === undefined ? null : checkFinishRun(finishRun.runId, { ...finishRun, status }, 'options.finishRun.');
  const checked = validateParts(parts, 'assistant');
  await runMessageCheck(
    context.checkMessage,
    { id, role: 'assistant', parts: checked, metadata: validMetadata },
    'finalize',
  );
  const { parts: validParts, byteSize, kept } = await fitAnswer(context, thread, id, checked, validMetadata);
  const counted = await storedTokenCount(context, { id, role: 'assistant', parts: validParts });
  const written = await writeAnswerInOneStatement(context, {
    thread,
    messageId: id,
    status,
    parts: validParts,
    metadata: validMetadata,
    byteSize,
    ...counted,
    leaseExpiresAt: null,
    kept,
    run,
  });
  if (written !== null && written !== IN_TRANSACTION) return written;
  const { agentMessage } = context.tables;
  const finishTheRun = async (tx: TenantTransaction) => {
    if (run && !(await finishRunIn(context, tx, run, thread))) throw new NotFoundError({ entity: 'run', id: run.id });
  };
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .update(agentMessage)
      .set({
        parts: validParts,
        ...(validMetadata === undefined ? {} : { metadata: validMetadata }),
        status,
        ...deferredSearchVector(context),
        byteSize,
        ...counted,
        leaseExpiresAt: null,
        completedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(stillStreaming(context, thread, id))
      .returning(messageColumns(context.tables));
    if (row) {
      await writeToolPayloads(context, tx, { messageRowId: row.id, parts: validParts, kept });
      await finishTheRun(tx);
      return toStoredMessage(row);
    }
    const [existing] = await tx
      .select(messageColumns(context.tables))
      .from(agentMessage)
      .where(and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, id)));
    if (existing?.status === status) {
      await finishTheRun(tx);
      return toStoredMessage(existing);
    }
    throw await explainMissing(context, tx, thread, id, `finalized as ${status}`);
  });
}
