import { is, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { TENANT_SETTING, USER_SETTING } from '../schema/tenant-policy.js';
import { rowsOf, type AgentHistoryDatabase } from './database.js';

/**
 * Runs `work` (store statements that set the tenant and role with `set_config(…, true)`) and, when `db` is the
 * caller's own transaction, puts the caller's tenant and user settings, search path, role and `enable_sort` back
 * afterwards: transaction-local settings would otherwise last to the end of the caller's transaction, and its next
 * statements would run as the application role of the store's tenant. A `work` that fails leaves nothing to
 * restore: its savepoint is rolled back (settings included), or the caller's transaction is aborted. On a database
 * (a pool) it only runs `work`.
 */
export async function keepCallerSettings<RESULT>(
  db: AgentHistoryDatabase,
  work: () => Promise<RESULT>,
): Promise<RESULT> {
  if (!is(db, PgTransaction)) return work();
  const [saved] = rowsOf<{ tenant: string | null; user_id: string | null; path: string; role: string; sort: string }>(
    await db.execute(
      sql`select current_setting(${TENANT_SETTING}, true) as tenant, current_setting(${USER_SETTING}, true) as user_id,
        current_setting('search_path') as path, current_setting('role') as role, current_setting('enable_sort') as sort`,
    ),
  );
  const result = await work();
  await db.execute(
    sql`select set_config(${TENANT_SETTING}, ${saved?.tenant ?? ''}, true), set_config(${USER_SETTING}, ${saved?.user_id ?? ''}, true),
      set_config('search_path', ${saved?.path ?? ''}, true), set_config('role', ${saved?.role ?? 'none'}, true),
      set_config('enable_sort', ${saved?.sort ?? 'on'}, true)`,
  );
  return result;
}
