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
    messageId: event.messageRowId ?? null,
    action: event.action,
    actor: event.actor,
    reason: event.reason ?? null,
    details: event.details ?? {},
  });
}
