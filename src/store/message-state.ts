import { and, eq, inArray, sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { recordAudit } from './audit.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertThreadId } from '../errors/assert-input.js';
import { requireThread } from './require-thread.js';
import type { ContextState, StoredMessage } from '../model/stored-rows.js';
import type { AuditOptions } from './audit.js';
import { ofThread } from './of-thread.js';

/** The options of `excludeMessages`. */
export interface ExcludeMessagesOptions {
  /** Why, e.g. 'superseded-by-regenerate', 'superseded-by-edit', 'off-topic'. Stored on the rows and audited. */
  reason: string;
  /** Who excluded them; audited. @default 'system' */
  actor?: string;
}

function assertMessageIds(messageIds: unknown): string[] {
  if (
    !Array.isArray(messageIds) ||
    messageIds.length === 0 ||
    messageIds.some((id) => typeof id !== 'string' || id.length === 0 || id.length > 200)
  ) {
    throw new InvalidArgumentError({
      argument: 'messageIds',
      value: messageIds,
      message: 'expected a non-empty array of message ids.',
    });
  }
  return [...new Set(messageIds as string[])];
}

async function setContextState(
  context: StoreContext,
  threadId: string,
  messageIds: string[],
  change: { contextState: Exclude<ContextState, 'redacted'>; exclusionReason: string | null },
  audit: { action: string; actor: string; reason?: string },
): Promise<StoredMessage[]> {
  const thread = assertThreadId(threadId);
  const ids = assertMessageIds(messageIds);
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    const { userId } = await requireThread(context, tx, thread);
    const rows = await tx
      .update(agentMessage)
      .set({ ...change, updatedAt: sql`now()` })
      .where(
        and(
          ofThread(context, agentMessage, thread),
          inArray(agentMessage.messageId, ids),
          // A redacted message stays redacted: exclusion and inclusion never bring its state back.
          inArray(agentMessage.contextState, ['eligible', 'excluded']),
        ),
      )
      .returning(messageColumns(context.tables));
    if (rows.length !== ids.length) {
      const found = new Set(rows.map((row) => row.messageId));
      const missing = ids.find((id) => !found.has(id));
      const [redacted] = await tx
        .select({ id: agentMessage.messageId })
        .from(agentMessage)
        .where(and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, missing!)));
      // Throwing rolls the whole call back: all the messages change, or none.
      if (redacted)
        throw new InvalidArgumentError({ argument: 'messageIds', value: missing, message: 'the message is redacted.' });
      throw new NotFoundError({ entity: 'message', id: missing });
    }
    for (const row of rows) {
      await recordAudit(context, tx, { ...audit, threadId: thread, userId, messageRowId: row.id });
    }
    return rows.map((row) => toStoredMessage(row)).sort((a, b) => a.sequence - b.sequence);
  });
}

/**
 * Takes messages out of the model's context (they stay in the log and in the history UI), e.g. the answers
 * superseded by a regenerate or an edit. History is never deleted by edits.
 */
export function excludeMessages(
  context: StoreContext,
  threadId: string,
  messageIds: string[],
  { reason, actor = 'system' }: ExcludeMessagesOptions,
) {
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > 500) {
    throw new InvalidArgumentError({
      argument: 'reason',
      value: reason,
      message: 'expected a string of 1 to 500 characters.',
    });
  }
  return setContextState(
    context,
    threadId,
    messageIds,
    { contextState: 'excluded', exclusionReason: reason },
    { action: 'message-excluded', actor, reason },
  );
}

/** Brings excluded messages back into the model's context. */
export function includeMessages(
  context: StoreContext,
  threadId: string,
  messageIds: string[],
  { actor = 'system', reason }: AuditOptions = {},
) {
  return setContextState(
    context,
    threadId,
    messageIds,
    { contextState: 'eligible', exclusionReason: null },
    { action: 'message-included', actor, reason },
  );
}

/** Pins a message: a pinned message is always in the model's context. */
export function pinMessage(context: StoreContext, threadId: string, messageId: string): Promise<StoredMessage> {
  return setPinned(context, threadId, messageId, { pinned: true });
}

/** Unpins a message: it is in the model's context again only when the budget selects it. */
export function unpinMessage(context: StoreContext, threadId: string, messageId: string): Promise<StoredMessage> {
  return setPinned(context, threadId, messageId, { pinned: false });
}

function setPinned(
  context: StoreContext,
  threadId: string,
  messageId: string,
  { pinned }: { pinned: boolean },
): Promise<StoredMessage> {
  const thread = assertThreadId(threadId);
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .update(agentMessage)
      .set({ pinned, updatedAt: sql`now()` })
      .where(and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, String(messageId))))
      .returning(messageColumns(context.tables));
    if (!row) throw new NotFoundError({ entity: 'message', id: messageId });
    return toStoredMessage(row);
  });
}
