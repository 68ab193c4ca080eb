import type { StoredMetadata } from '../schema/define-agent-tables.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

/** What an audit event records. `details` must never hold redacted content. */
export interface AuditEventInput {
  action: string;
  actor: string;
  reason?: string;
  threadId?: string;
  messageRowId?: string;
  details?: StoredMetadata;
}

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
