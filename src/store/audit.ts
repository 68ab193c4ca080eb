import { and, eq } from 'drizzle-orm';
import type { StoredMetadata } from '../schema/define-agent-tables.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

/** Who made a change and why: recorded in the audit log (`agent_audit_event`) with the change. */
export interface AuditOptions {
  /** Who made the change: a user id, a service name. @default 'system' */
  actor?: string;
  /** Why the change was made. @default none (stored as null) */
  reason?: string;
}

/** What an audit event records. `details` must never hold redacted content. */
export interface AuditEventInput {
  /** What happened, noun-first: 'thread-deleted', 'message-redacted', … */
  action: string;
  /** Who did it. */
  actor: string;
  /** Why, when the caller said. */
  reason?: string;
  /** The thread it concerns, if one. */
  threadId?: string;
  /** The user of the thread it concerns (the user scope shows the event to that user). @default the scoped user, or null */
  userId?: string | null;
  /** The message row (`agent_message.id`, not the client's message id) it concerns, if one. */
  messageRowId?: string;
  /** Structured facts about the change (counts, modes), never content. */
  details?: StoredMetadata;
}

/** Inserts one audit event in the caller's tenant transaction, so it commits or rolls back with the change. */
export async function recordAudit(context: StoreContext, tx: TenantTransaction, event: AuditEventInput): Promise<void> {
  await tx.insert(context.tables.agentAuditEvent).values({
    tenantId: context.tenantId,
    threadId: event.threadId ?? null,
    userId: event.userId === undefined ? await threadUserId(context, tx, event.threadId) : event.userId,
    messageId: event.messageRowId ?? null,
    action: event.action,
    actor: event.actor,
    reason: event.reason ?? null,
    details: event.details ?? {},
  });
}

/** The user of the event's thread: the scoped user under a user scope (no other thread is visible), else read. */
async function threadUserId(context: StoreContext, tx: TenantTransaction, threadId: string | undefined) {
  if (context.userId !== null || threadId === undefined) return context.userId;
  const { agentThread } = context.tables;
  const [row] = await tx
    .select({ userId: agentThread.userId })
    .from(agentThread)
    .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, threadId)));
  return row?.userId ?? null;
}
