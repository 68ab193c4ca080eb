import { sql, type SQL } from 'drizzle-orm';
import { pgPolicy, type AnyPgColumn, type PgRole } from 'drizzle-orm/pg-core';

/**
 * The one setting that carries the tenant of a transaction. Every policy reads it and the
 * transaction helper writes it (with `set_config(…, true)`, so it never outlives the transaction).
 */
export const TENANT_SETTING = 'app.tenant_id';

/**
 * The current tenant as a uuid, or null when none is set.
 *
 * `nullif(…, '')` matters: once a connection has used the setting, it reads back as `''` instead of
 * null, and `''::uuid` raises. No `(select …)` around it: Citus refuses a sub-select in a policy on a distributed
 * table, and the expression is stable, so PostgreSQL still evaluates it once per index scan, not once per row.
 */
export const currentTenantId: SQL = sql.raw(`nullif(current_setting('${TENANT_SETTING}', true), '')::uuid`);

/** The tenant predicate shared by every policy: the row's tenant is the transaction's tenant. */
export function tenantPredicate(tenantIdColumn: AnyPgColumn): SQL {
  return sql`${tenantIdColumn} = ${currentTenantId}`;
}

/**
 * The optional second setting: the user a transaction acts for, inside its tenant. Unset (or empty), the
 * transaction sees the whole tenant (an admin or a background job); set, it sees and writes only the rows whose
 * `user_id` is that user (see {@link tenantIsolationPolicy}).
 */
export const USER_SETTING = 'app.user_id';

/** The current user as text, or null when no user scope is set (`''` once the connection has used it, as above). */
export const currentUserId: SQL = sql.raw(`nullif(current_setting('${USER_SETTING}', true), '')`);

/** The user predicate: with no user scope set, every row of the tenant; with one, only that user's rows. */
export function userScopePredicate(userIdColumn: AnyPgColumn): SQL {
  return sql`(${currentUserId} is null or ${userIdColumn} = ${currentUserId})`;
}

/**
 * One permissive policy for every command, for the application role: a row is visible and writable only inside a
 * transaction whose tenant is the row's tenant and, with `userIdColumn` and under a user scope, whose user is the row's user (a row with no
 * user is then nobody's). With no tenant set, no rows (fail closed).
 *
 * One policy, both predicates ANDed, not a second restrictive policy: Citus re-creates a restrictive policy on the
 * shards as a permissive one, which would OR the user scope away on the workers.
 */
export function tenantIsolationPolicy(
  name: string,
  tenantIdColumn: AnyPgColumn,
  role: PgRole,
  userIdColumn?: AnyPgColumn,
) {
  const predicate =
    userIdColumn === undefined
      ? tenantPredicate(tenantIdColumn)
      : sql`${tenantPredicate(tenantIdColumn)} and ${userScopePredicate(userIdColumn)}`;
  return pgPolicy(name, { as: 'permissive', for: 'all', to: role, using: predicate, withCheck: predicate });
}
