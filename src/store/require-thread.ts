import { and, eq, isNull } from 'drizzle-orm';
import { NotFoundError } from '../errors/not-found-error.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { threadColumns, toStoredThread } from './row-mapping.js';
import type { StoreContext } from './store-context.js';

/** Locks and returns a live thread of the tenant, or throws {@link NotFoundError}. */
export async function requireThread(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
  { lock = false } = {},
) {
  const { agentThread } = context.tables;
  const query = tx
    .select(threadColumns(context.tables))
    .from(agentThread)
    .where(
      and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, threadId), isNull(agentThread.deletedAt)),
    );
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw new NotFoundError({ entity: 'thread', id: threadId });
  return toStoredThread(row);
}
