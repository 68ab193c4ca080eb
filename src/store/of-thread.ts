import { and, eq, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { StoreContext } from './store-context.js';

/**
 * The rows of one thread of the context's tenant, in any of the tables that carry both columns. Every query
 * names the tenant as well as the thread, so that it routes to one shard group on Citus and uses the
 * `(tenant_id, thread_id, …)` indexes, on top of what row-level security enforces.
 */
export function ofThread(
  context: StoreContext,
  table: { tenantId: AnyPgColumn; threadId: AnyPgColumn },
  threadId: string,
): SQL {
  return and(eq(table.tenantId, context.tenantId), eq(table.threadId, threadId))!;
}
