import { sql } from 'drizzle-orm';
import { rowsOf } from '../tenant/database.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

/** Every thread of the tenant connected to `threadId` through fork links (ancestors, descendants, siblings). */
export async function forkFamily(context: StoreContext, tx: TenantTransaction, threadId: string): Promise<string[]> {
  const { agentThread } = context.tables;
  const rows = rowsOf<{ id: string }>(
    await tx.execute(sql`
      with recursive up(id, parent) as (
        select id, parent_thread_id from ${agentThread} where tenant_id = ${context.tenantId} and id = ${threadId}
        union
        select t.id, t.parent_thread_id from ${agentThread} t join up on t.id = up.parent where t.tenant_id = ${context.tenantId}
      ), root as (
        select id from up where parent is null or not exists (select 1 from ${agentThread} p where p.tenant_id = ${context.tenantId} and p.id = up.parent)
      ), down(id) as (
        select id from root
        union
        select t.id from ${agentThread} t join down on t.parent_thread_id = down.id where t.tenant_id = ${context.tenantId}
      )
      select id from down union select ${threadId}::uuid`),
  );
  return rows.map((row) => row.id);
}
