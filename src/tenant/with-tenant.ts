import { sql } from 'drizzle-orm';
import type { AgentHistoryDatabase } from './database.js';

/** The transaction handle a {@link withTenant} callback receives. */
export type TenantTransaction = Parameters<Parameters<AgentHistoryDatabase['transaction']>[0]>[0];

/**
 * Runs `work` in a transaction scoped to one tenant: one statement sets the tenant setting and (when
 * `role` is given) switches to the application role, both with `set_config(…, true)`, so they end with the
 * transaction and a pooled connection never carries them to its next borrower.
 */
export async function withTenant<RESULT>(
  db: AgentHistoryDatabase,
  { tenantId, role, isolationLevel }: { tenantId: string; role: string | null; isolationLevel?: 'read committed' | 'repeatable read' },
  work: (tx: TenantTransaction) => Promise<RESULT>,
): Promise<RESULT> {
  return db.transaction(async (tx) => {
    await tx.execute(
      role === null
        ? sql`select set_config('app.tenant_id', ${tenantId}, true)`
        : sql`select set_config('app.tenant_id', ${tenantId}, true), set_config('role', ${role}, true)`,
    );
    return work(tx);
  }, isolationLevel === undefined ? undefined : { isolationLevel });
}
