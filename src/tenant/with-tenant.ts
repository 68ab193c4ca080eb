import { sql } from 'drizzle-orm';
import { CitusSettingError } from '../errors/citus-setting-error.js';
import { InvalidTenantError } from '../errors/invalid-tenant-error.js';
import { TENANT_SETTING } from '../schema/tenant-policy.js';
import { rowsOf, type AgentHistoryDatabase } from './database.js';

// A literal, not a parameter: the statement text stays the same for every tenant (prepared-statement caches).
const setTenant = sql.raw(`set_config('${TENANT_SETTING}', `);
/** Null on PostgreSQL and PGlite (no such setting); on a Citus coordinator, how `SET` commands reach the workers. */
const CITUS_PROPAGATION_SETTING = 'citus.propagate_set_commands';
const citusPropagation = sql.raw(`current_setting('${CITUS_PROPAGATION_SETTING}', true) as citus_propagation`);
/** A uuid or nothing: safe between single quotes. */
const TENANT_LITERAL = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?$/i;

/** The transaction handle a {@link withTenant} callback receives. */
export type TenantTransaction = Parameters<Parameters<AgentHistoryDatabase['transaction']>[0]>[0];

/**
 * Runs `work` in a transaction scoped to one tenant: one statement sets the tenant setting and (when
 * `role` is given) switches to the application role, both with `set_config(…, true)`, so they end with the
 * transaction and a pooled connection never carries them to its next borrower.
 *
 * On a Citus coordinator (the same statement reads `citus.propagate_set_commands`, null elsewhere) the tenant
 * must also reach the workers, which never see `set_config()` values: a second statement, `SET LOCAL`, which Citus
 * forwards to every worker the transaction touches when `citus.propagate_set_commands` is `'local'`. With any other
 * value it throws {@link CitusSettingError} instead of letting the reads come back empty. The role needs nothing
 * more: Citus reaches the workers as the current user, which is the application role by then.
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
      const [settings] = rowsOf<{ citus_propagation: string | null }>(
        await tx.execute(
          role === null
            ? sql`select ${setTenant}${tenantId}, true), ${citusPropagation}`
            : sql`select ${setTenant}${tenantId}, true), set_config('role', ${role}, true), ${citusPropagation}`,
        ),
      );
      const propagation = settings?.citus_propagation ?? null;
      if (propagation !== null) {
        if (propagation !== 'local') {
          throw new CitusSettingError({ setting: CITUS_PROPAGATION_SETTING, value: propagation, expected: 'local' });
        }
        // `SET` takes no bind parameters: the literal is safe because a uuid has no quote (checked here too, as
        // withTenant is public). Empty is allowed, as with set_config: no tenant, no rows.
        if (typeof tenantId !== 'string' || !TENANT_LITERAL.test(tenantId)) throw new InvalidTenantError({ tenantId });
        await tx.execute(sql.raw(`set local ${TENANT_SETTING} = '${tenantId}'`));
      }
      return work(tx);
    },
    isolationLevel === undefined ? undefined : { isolationLevel },
  );
}
