import { sql } from 'drizzle-orm';
import { TENANT_SETTING } from '../schema/tenant-policy.js';
import type { AgentHistoryDatabase } from './database.js';

// A literal, not a parameter: the statement text stays the same for every tenant (prepared-statement caches).
const setTenant = sql.raw(`set_config('${TENANT_SETTING}', `);

/** The transaction handle a {@link withTenant} callback receives. */
export type TenantTransaction = Parameters<Parameters<AgentHistoryDatabase['transaction']>[0]>[0];

/**
 * Runs `work` in a transaction scoped to one tenant: one statement sets the tenant setting and (when
 * `role` is given) switches to the application role, both with `set_config(…, true)`, so they end with the
 * transaction and a pooled connection never carries them to its next borrower.
 */
export async function withTenant<RESULT>(
  db: AgentHistoryDatabase,
  {
    tenantId,
    role,
    isolationLevel,
  }: { tenantId: string; role: string | null; isolationLevel?: 'read committed' | 'repeatable read' },
  work: (tx: TenantTransaction) => Promise<RESULT>,
): Promise<RESULT> {
  return db.transaction(
    async (tx) => {
      await tx.execute(
        role === null
          ? sql`select ${setTenant}${tenantId}, true)`
          : sql`select ${setTenant}${tenantId}, true), set_config('role', ${role}, true)`,
      );
      return work(tx);
    },
    isolationLevel === undefined ? undefined : { isolationLevel },
  );
}
