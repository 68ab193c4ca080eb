import { and, asc, eq, or } from 'drizzle-orm';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

/**
 * Locks (FOR UPDATE, in id order) every thread of the tenant in `threadId`'s fork family, soft-deleted ones
 * included, and returns their ids: the family's root and every thread whose `root_thread_id` is that root, so the
 * family holds whatever threads in between were deleted. A fork locks its source FOR SHARE before it copies, so
 * once the family is locked no fork can copy from it until this transaction ends; the lock is taken again until
 * the family stops growing, for a fork that committed while this one waited.
 */
export async function lockForkFamily(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
): Promise<string[]> {
  const { agentThread } = context.tables;
  const [self] = await tx
    .select({ rootThreadId: agentThread.rootThreadId })
    .from(agentThread)
    .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, threadId)));
  const root = self?.rootThreadId ?? threadId;
  let family: string[] = [];
  for (;;) {
    const locked = await tx
      .select({ id: agentThread.id })
      .from(agentThread)
      .where(
        and(
          eq(agentThread.tenantId, context.tenantId),
          or(eq(agentThread.id, root), eq(agentThread.rootThreadId, root)),
        ),
      )
      .orderBy(asc(agentThread.id))
      .for('update');
    if (locked.length === family.length) return family;
    family = locked.map((row) => row.id);
  }
}
