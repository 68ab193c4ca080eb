import { sql } from 'drizzle-orm';
import { CitusSettingError } from '../errors/citus-setting-error.js';
import { InvalidTenantError } from '../errors/invalid-tenant-error.js';
import { TENANT_SETTING, USER_SETTING } from '../schema/tenant-policy.js';
import { rowsOf, type AgentHistoryDatabase } from './database.js';

// A literal, not a parameter: the statement text stays the same for every tenant (prepared-statement caches).
const setTenant = sql.raw(`set_config('${TENANT_SETTING}', `);
/** Null on PostgreSQL and PGlite (no such setting); on a Citus coordinator, how `SET` commands reach the workers. */
const CITUS_PROPAGATION_SETTING = 'citus.propagate_set_commands';
const citusPropagation = sql.raw(`current_setting('${CITUS_PROPAGATION_SETTING}', true) as citus_propagation`);
/** A uuid or nothing: safe between single quotes. */
const TENANT_LITERAL = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?$/i;

/** What {@link withTenant} scopes a transaction to. */
export interface TenantScope {
  /** The tenant (a uuid; empty means none: no rows). */
  tenantId: string;
  /** The role to switch to, or null to keep the login's. */
  role: string | null;
  /**
   * The user inside the tenant (`app.user_id`): the tenant policies then show and accept only that user's rows.
   * Null or absent: the whole tenant.
   */
  userId?: string | null;
  /**
   * The schema of the tables, first on the transaction's `search_path`, then `pg_temp` last: an unqualified name in a
   * store statement (Drizzle names tables in `public` without their schema) never resolves to a temporary table
   * of the same name. @default 'public'
   */
  schema?: string;
  /** The transaction's isolation level. @default the database's */
  isolationLevel?: 'read committed' | 'repeatable read';
}

/**
 * The one statement that scopes a transaction, every value transaction-local (`set_config(…, true)`): the tenant,
 * the user (empty when none, so a session-level value never leaks in), the search path, the role when given, and
 * `citus.propagate_set_commands` read back (null off Citus).
 */
export function tenantSettingsStatement({ tenantId, role, userId = null, schema = 'public' }: TenantScope) {
  const searchPath = `"${schema.replaceAll('"', '""')}", pg_temp`;
  return sql`select ${setTenant}${tenantId}, true), set_config(${USER_SETTING}, ${userId ?? ''}, true), set_config('search_path', ${searchPath}, true)${
    role === null ? sql`` : sql`, set_config('role', ${role}, true)`
  }, ${citusPropagation}`;
}

/** A Postgres string literal for `SET`, which takes no parameters: an escape string, so backslashes are inert too. */
function settingLiteral(value: string): string {
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** The transaction handle a {@link withTenant} callback receives. */
export type TenantTransaction = Parameters<Parameters<AgentHistoryDatabase['transaction']>[0]>[0];

/**
 * Runs `work` in a transaction scoped to one tenant (and, optionally, one user of it): one statement
 * ({@link tenantSettingsStatement}) sets the tenant and user settings and the search path and (when `role` is given)
 * switches to the application role, all with `set_config(…, true)`, so they end with the transaction and a pooled
 * connection never carries them to its next borrower.
 *
 * On a Citus coordinator (the same statement reads `citus.propagate_set_commands`, null elsewhere) the tenant
 * (and the user, when scoped) must also reach the workers, which never see `set_config()` values: `SET LOCAL`, which Citus
 * forwards to every worker the transaction touches when `citus.propagate_set_commands` is `'local'`. With any other
 * value it throws {@link CitusSettingError} instead of letting the reads come back empty. The role needs nothing
 * more: Citus reaches the workers as the current user, which is the application role by then.
 */
export async function withTenant<RESULT>(
  db: AgentHistoryDatabase,
  scope: TenantScope,
  work: (tx: TenantTransaction) => Promise<RESULT>,
): Promise<RESULT> {
  return db.transaction(
    async (tx) => {
      const { tenantId, userId = null } = scope;
      const [settings] = rowsOf<{ citus_propagation: string | null }>(await tx.execute(tenantSettingsStatement(scope)));
      const propagation = settings?.citus_propagation ?? null;
      if (propagation !== null) {
        if (propagation !== 'local') {
          throw new CitusSettingError({ setting: CITUS_PROPAGATION_SETTING, value: propagation, expected: 'local' });
        }
        // `SET` takes no bind parameters: the literal is safe because a uuid has no quote (checked here too, as
        // withTenant is public). Empty is allowed, as with set_config: no tenant, no rows.
        if (typeof tenantId !== 'string' || !TENANT_LITERAL.test(tenantId)) throw new InvalidTenantError({ tenantId });
        await tx.execute(sql.raw(`set local ${TENANT_SETTING} = '${tenantId}'`));
        if (userId !== null) await tx.execute(sql.raw(`set local ${USER_SETTING} = ${settingLiteral(userId)}`));
      }
      return work(tx);
    },
    scope.isolationLevel === undefined ? undefined : { isolationLevel: scope.isolationLevel },
  );
}
