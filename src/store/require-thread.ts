import { and, eq, isNull } from 'drizzle-orm';
import { NotFoundError } from '../errors/not-found-error.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { threadColumns, toStoredThread } from './row-mapping.js';
import type { StoreContext } from './store-context.js';

/**
 * Returns a live thread of the tenant, or throws {@link NotFoundError}; `lock: true` locks its row FOR UPDATE,
 * `lock: 'share'` FOR SHARE, `lock: 'key share'` FOR KEY SHARE.
 */
export async function requireThread(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
  { lock = false }: { lock?: boolean | 'share' | 'key share' } = {},
) {
  const { agentThread } = context.tables;
  const query = tx
    .select(threadColumns(context.tables))
    .from(agentThread)
    .where(
      and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, threadId), isNull(agentThread.deletedAt)),
    );
  const [row] = lock === false ? await query : await query.for(lock === true ? 'update' : lock);
  if (!row) throw new NotFoundError({ entity: 'thread', id: threadId });
  return toStoredThread(row);
}
