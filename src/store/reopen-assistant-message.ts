import { and, eq, sql } from 'drizzle-orm';
import { assertOptionalUuid, assertThreadId } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import type { StoredMessage } from '../model/stored-rows.js';
import { fitAssistantParts } from './fit-assistant-parts.js';
import { writeToolPayloads } from './tool-payload-rows.js';
import { ofThread } from './of-thread.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { inTenant, postgresErrorCode, type StoreContext } from './store-context.js';
import { storedTokenCount } from './stored-token-count.js';
import { validateParts } from './validate-message.js';
import { runMessageCheck } from './message-check.js';

/** The options of `reopenAssistantMessage`. */
export interface ReopenAssistantMessageOptions {
  /** The parts the caller read: the message changes only if it still holds these (equal as jsonb: key order does not count). */
  expectedParts: StoredMessagePart[];
  /** The message's new parts (the read parts with the approval responses applied). */
  parts: StoredMessagePart[];
  /**
   * The run that continues the message: it goes back to `streaming` under this run, with a lease, to be
   * checkpointed and finalized again. Without it, the message stays `completed` with the new parts. @default none
   */
  runId?: string;
}

/** What `reopenAssistantMessage` did: `updated: false` when the message was not as expected (`stored` is it now). */
export interface ReopenResult {
  /** Whether this call changed the message (false: another writer changed it first, or it is not completed). */
  updated: boolean;
  /** The message as stored after the call. */
  stored: StoredMessage;
}

/**
 * Changes a `completed`, eligible assistant message whose parts are still `expectedParts` (a compare-and-set):
 * used to record a tool approval response on the message that asked for it and continue that message. Of two
 * racing callers with the same `expectedParts`, exactly one gets `updated: true`.
 */
export async function reopenAssistantMessage(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { expectedParts, parts, runId }: ReopenAssistantMessageOptions,
): Promise<ReopenResult> {
  const thread = assertThreadId(threadId);
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 200)
    throw new NotFoundError({ entity: 'message', id: messageId });
  if (!Array.isArray(expectedParts)) {
    throw new InvalidArgumentError({
      argument: 'options.expectedParts',
      value: expectedParts,
      message: 'expected the array of parts read.',
    });
  }
  const run = assertOptionalUuid('options.runId', runId);
  const valid = validateParts(parts, 'assistant');
  await runMessageCheck(
    context.checkMessage,
    { id: messageId, role: 'assistant', parts: valid, metadata: undefined },
    'reopen',
  );
  const fitted = await fitAssistantParts(valid, {
    limit: context.maxMessageBytes,
    metadataBytes: 0,
    threadId: thread,
    messageId,
    options: context.oversizedToolPayloads,
  });
  const counted = await storedTokenCount(context, {
    id: messageId,
    role: 'assistant',
    parts: fitted.parts,
  });
  const { agentMessage } = context.tables;
  const ofMessage = and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, messageId));
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .update(agentMessage)
      .set({
        parts: fitted.parts,
        byteSize: fitted.byteSize,
        ...counted,
        updatedAt: sql`now()`,
        ...(run === null
          ? {}
          : {
              status: 'streaming' as const,
              runId: run,
              completedAt: null,
              leaseExpiresAt: new Date(context.now().getTime() + context.leaseMs),
            }),
      })
      .where(
        and(
          ofMessage,
          eq(agentMessage.role, 'assistant'),
          eq(agentMessage.status, 'completed'),
          eq(agentMessage.contextState, 'eligible'),
          sql`${agentMessage.parts}::jsonb = ${JSON.stringify(expectedParts)}::jsonb`,
        ),
      )
      .returning(messageColumns(context.tables));
    if (row) {
      await writeToolPayloads(context, tx, { messageRowId: row.id, parts: fitted.parts, kept: fitted.kept });
      return { updated: true, stored: toStoredMessage(row) };
    }
    const [existing] = await tx.select(messageColumns(context.tables)).from(agentMessage).where(ofMessage);
    if (!existing) throw new NotFoundError({ entity: 'message', id: messageId });
    return { updated: false, stored: toStoredMessage(existing) };
  }).catch((error: unknown) => {
    // The (tenant, thread, run) foreign key: a run that is missing or another thread's, as appendMessage says it.
    if (run !== null && postgresErrorCode(error) === '23503') throw new NotFoundError({ entity: 'run', id: run });
    throw error;
  });
}
