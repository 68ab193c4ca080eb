import { sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { RowLevelSecurityBypassError } from '../errors/row-level-security-bypass-error.js';
import type { AgentTables } from '../schema/define-agent-tables.js';
import { rowsOf, type AgentHistoryDatabase } from '../tenant/database.js';
import { keepCallerSettings } from '../tenant/keep-caller-settings.js';
import { withTenant } from '../tenant/with-tenant.js';

/** What `createAgentHistory` does when its role would bypass row-level security: refuse (throw) or warn once. */
export type RowLevelSecurityCheck = 'refuse' | 'warn';

interface CheckRow {
  role: string;
  superuser: boolean;
  bypass_rls: boolean;
  tables: Array<{ table: string; found: boolean; rls: boolean; forced: boolean; owned: boolean }>;
}

// No tenant matters for a catalog query; the nil uuid is a valid one.
const NO_TENANT = '00000000-0000-0000-0000-000000000000';

/**
 * Why row-level security would not hold for the role the store's statements run as (`appRole`, or the login when
 * it is null): empty when it holds. A role is held when it is neither superuser nor `BYPASSRLS`, and every table
 * has row-level security enabled, and forced unless the role does not own it.
 */
export async function rowLevelSecurityBypasses(
  db: AgentHistoryDatabase,
  tables: AgentTables,
  appRole: string | null,
): Promise<{ role: string; reasons: string[] }> {
  const names = (Object.values(tables) as unknown[])
    .filter((value): value is PgTable => value instanceof PgTable)
    .map((table) => {
      const { schema = 'public', name } = getTableConfig(table);
      return `"${schema}"."${name}"`;
    });
  const [row] = await keepCallerSettings(db, () =>
    withTenant(db, { tenantId: NO_TENANT, role: appRole }, async (tx) =>
      rowsOf<CheckRow>(
        await tx.execute(sql`
        select current_user::text as role, r.rolsuper as superuser, r.rolbypassrls as bypass_rls,
          (select json_agg(json_build_object('table', n.name, 'found', c.oid is not null,
             'rls', coalesce(c.relrowsecurity, false), 'forced', coalesce(c.relforcerowsecurity, false),
             'owned', coalesce(pg_has_role(current_user, c.relowner, 'USAGE'), false)) order by n.name)
           from jsonb_array_elements_text(${JSON.stringify(names)}::jsonb) as n(name)
           left join pg_class c on c.oid = to_regclass(n.name)) as tables
        from pg_roles r where r.rolname = current_user`),
      ),
    ),
  );
  const reasons: string[] = [];
  if (!row) return { role: 'unknown', reasons: ['the role is not in pg_roles'] };
  if (row.superuser) reasons.push('it is a superuser');
  if (row.bypass_rls) reasons.push('it has BYPASSRLS');
  for (const table of row.tables) {
    if (!table.found) reasons.push(`${table.table} does not exist (run the migrations)`);
    else if (!table.rls) reasons.push(`${table.table} has row-level security disabled`);
    else if (table.owned && !table.forced)
      reasons.push(`it owns ${table.table}, whose row-level security is not forced`);
  }
  return { role: row.role, reasons };
}

/**
 * A check run once (on the first store call), then remembered: throws {@link RowLevelSecurityBypassError} when
 * row-level security would not hold (`'refuse'`), or logs it once (`'warn'`). A failure to run it (the database
 * unreachable) is not remembered: the next call checks again.
 */
export function onceRowLevelSecurityCheck(
  db: AgentHistoryDatabase,
  tables: AgentTables,
  appRole: string | null,
  mode: RowLevelSecurityCheck,
  warn: (message: string) => void = console.warn,
): () => Promise<void> {
  let checked: Promise<void> | undefined;
  const run = async () => {
    const { role, reasons } = await rowLevelSecurityBypasses(db, tables, appRole);
    if (reasons.length === 0) return;
    const error = new RowLevelSecurityBypassError({ role, reasons });
    if (mode === 'refuse') throw error;
    warn(`agent-history: ${error.message}`);
  };
  return () =>
    (checked ??= run().catch((error: unknown) => {
      if (!(error instanceof RowLevelSecurityBypassError)) checked = undefined;
      throw error;
    }));
}
