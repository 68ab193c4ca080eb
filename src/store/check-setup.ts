import { sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { DatabaseSetupError, type SetupProblem } from '../errors/database-setup-error.js';
import { RowLevelSecurityBypassError } from '../errors/row-level-security-bypass-error.js';
import { defaultTables } from './default-tables.js';
import { DEFAULT_APP_ROLE, type AgentTables } from '../schema/define-agent-tables.js';
import { rowsOf, type AgentHistoryDatabase } from '../tenant/database.js';
import { keepCallerSettings } from '../tenant/keep-caller-settings.js';
import { withTenant } from '../tenant/with-tenant.js';
import { PACKAGE_FUNCTIONS } from './package-functions.js';

// No tenant matters for a catalog query; the nil uuid is a valid one.
const NO_TENANT = '00000000-0000-0000-0000-000000000000';

export type { SetupProblem };

/** What {@link checkSetup} returns. */
export interface SetupReport {
  /** Whether nothing is wrong. */
  ok: boolean;
  /** The login (`current_user` of the connection, before any role switch). */
  login: string;
  /** The role the store's statements run as: `appRole`, or the login when it is null. */
  role: string;
  /** Everything wrong, in the order to fix it; empty when `ok`. */
  problems: SetupProblem[];
}

/** The options of {@link checkSetup}. */
export interface CheckSetupOptions {
  /** The tables of `createAgentHistory({ tables })`. @default the default tables */
  tables?: AgentTables;
  /** The application role of `createAgentHistory({ appRole })`; null: the login itself. @default 'agent_history_app' */
  appRole?: string | null;
}

interface CatalogRow {
  login: string;
  role_exists: boolean;
  member: boolean | null;
  superuser: boolean | null;
  bypass_rls: boolean | null;
  schema_usable: boolean | null;
  tables: Array<{ table: string; found: boolean; rls: boolean; forced: boolean; owned: boolean }>;
  functions: Array<{ name: string; found: boolean; executable: boolean }>;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Checks, for the login `db` connects as, everything the store needs from the database: that the migrations ran
 * (every table and function exists), that the application role exists and the login may switch to it, that the login
 * may use the tables' schema and call the package's functions, and that row-level security holds for the role the
 * statements run as (neither superuser nor `BYPASSRLS`, every table with row-level security enabled, and forced where
 * that role owns it). Each problem comes with the SQL that fixes it. One read-only catalog query; nothing is changed.
 * The store runs it once, before its first statement (or at `ready()`), and throws {@link DatabaseSetupError} or
 * `RowLevelSecurityBypassError`.
 *
 * @example
 * const report = await checkSetup(db);
 * if (!report.ok) console.error(report.problems.map((problem) => problem.fix).join('\n'));
 */
export async function checkSetup(db: AgentHistoryDatabase, options: CheckSetupOptions = {}): Promise<SetupReport> {
  return (await inspectSetup(db, options)).report;
}

/** {@link checkSetup}'s report, and why row-level security would not hold (empty when it holds). */
async function inspectSetup(
  db: AgentHistoryDatabase,
  { tables = defaultTables(), appRole = DEFAULT_APP_ROLE }: CheckSetupOptions,
): Promise<{ report: SetupReport; bypassReasons: string[] }> {
  const schema = getTableConfig(tables.agentMessage).schema ?? 'public';
  const row = await readCatalog(db, tables, appRole, schema);
  const login = row.login;
  const role = appRole ?? login;
  const problems = grantProblems(row, schema, login, role);
  // Without the tables or the role there is nothing to hold row-level security to yet.
  const blocked = problems.some(
    (problem) => problem.code === 'migrations-missing' || problem.code === 'app-role-missing',
  );
  const bypassReasons = blocked ? [] : rowLevelSecurityReasons(row);
  if (bypassReasons.length > 0)
    problems.push({
      code: 'row-level-security-bypassed',
      message: `Row-level security does not hold for the role ${quoted(role)}: ${bypassReasons.join('; ')}.`,
      fix:
        'connect as a login that is neither superuser nor BYPASSRLS nor the tables’ owner, a member of the ' +
        'application role (see "The application login" in docs/postgres.md).',
    });
  return { report: { ok: problems.length === 0, login, role, problems }, bypassReasons };
}

/** One read-only query of the catalogs: what {@link inspectSetup} needs to know, as the login. */
async function readCatalog(
  db: AgentHistoryDatabase,
  tables: AgentTables,
  appRole: string | null,
  schema: string,
): Promise<CatalogRow> {
  const tableNames = (Object.values(tables) as unknown[])
    .filter((value): value is PgTable => value instanceof PgTable)
    .map((table) => {
      const { schema = 'public', name } = getTableConfig(table);
      return { schema, name };
    });
  // In a store transaction (no tenant, no role switch), as every call reads: as a lone pooled query it left some
  // stores' appends waiting for good under backends terminated at random (connection-faults.test.ts).
  const [row] = await keepCallerSettings(db, () =>
    withTenant(db, { tenantId: NO_TENANT, role: null }, async (tx) =>
      rowsOf<CatalogRow>(
        await tx.execute(sql`
      with settings as (select ${appRole}::text as app_role, ${schema}::text as schema_name),
      effective as (
        select r.* from pg_catalog.pg_roles r, settings s where r.rolname = coalesce(s.app_role, current_user::text)
      )
      select current_user::text as login,
        s.app_role is null or exists (select 1 from pg_catalog.pg_roles r where r.rolname = s.app_role) as role_exists,
        case when s.app_role is null then true
          when exists (select 1 from pg_catalog.pg_roles r where r.rolname = s.app_role)
          then pg_catalog.pg_has_role(current_user, s.app_role, 'MEMBER') end as member,
        (select e.rolsuper from effective e) as superuser,
        (select e.rolbypassrls from effective e) as bypass_rls,
        case when exists (select 1 from pg_catalog.pg_namespace n where n.nspname = s.schema_name)
          then pg_catalog.has_schema_privilege(current_user, s.schema_name, 'USAGE') end as schema_usable,
        (select json_agg(json_build_object('table', '"' || t.schema || '"."' || t.name || '"', 'found', c.oid is not null,
            'rls', coalesce(c.relrowsecurity, false), 'forced', coalesce(c.relforcerowsecurity, false),
            'owned', coalesce((select pg_catalog.pg_has_role(e.oid, c.relowner, 'USAGE') from effective e), false))
            order by t.schema, t.name)
          -- By name, not to_regclass: that needs USAGE on the schema, which is one of the things checked.
          from pg_catalog.jsonb_to_recordset(${JSON.stringify(tableNames)}::jsonb) as t(schema text, name text)
          left join lateral (
            select c.* from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
            where n.nspname = t.schema and c.relname = t.name and c.relkind in ('r', 'p')
          ) c on true) as tables,
        (select json_agg(json_build_object('name', f.name, 'found', p.oid is not null,
            'executable', coalesce(pg_catalog.has_function_privilege(current_user, p.oid, 'EXECUTE'), false))
            order by f.name)
          from pg_catalog.jsonb_array_elements_text(${JSON.stringify(PACKAGE_FUNCTIONS)}::jsonb) as f(name)
          left join lateral (
            select p.oid from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
            where n.nspname = s.schema_name and p.proname = f.name limit 1
          ) p on true) as functions
      from settings s`),
      ),
    ),
  );
  return row!;
}

/** What the login lacks: the migrations, the role, the grants; in the order to fix them. */
function grantProblems(row: CatalogRow, schema: string, login: string, role: string): SetupProblem[] {
  const problems: SetupProblem[] = [];
  const missing = [
    ...row.tables.filter((table) => !table.found).map((table) => `table ${table.table}`),
    ...row.functions.filter((fn) => !fn.found).map((fn) => `function ${quoted(schema)}.${fn.name}`),
  ];
  if (missing.length > 0)
    problems.push({
      code: 'migrations-missing',
      message: `The migrations did not run here: missing ${missing.join(', ')}.`,
      fix: 'run migrate(db) (or drizzle-kit migrate) as the database owner.',
    });
  if (!row.role_exists)
    problems.push({
      code: 'app-role-missing',
      message: `The application role ${quoted(role)} does not exist.`,
      fix: `CREATE ROLE ${quoted(role)} NOLOGIN; (as a role with CREATEROLE), then run the migrations.`,
    });
  else if (row.member === false)
    problems.push({
      code: 'app-role-not-granted',
      message: `The login ${quoted(login)} may not switch to the application role ${quoted(role)}.`,
      fix: `GRANT ${quoted(role)} TO ${quoted(login)};`,
    });
  if (row.schema_usable === false)
    problems.push({
      code: 'schema-not-usable',
      message: `The login ${quoted(login)} may not use the schema ${quoted(schema)}.`,
      fix: `GRANT USAGE ON SCHEMA ${quoted(schema)} TO ${quoted(login)};`,
    });
  for (const fn of row.functions.filter((fn) => fn.found && !fn.executable))
    problems.push({
      code: 'function-not-executable',
      message: `The login ${quoted(login)} may not call ${quoted(schema)}.${fn.name}.`,
      fix: `GRANT EXECUTE ON FUNCTION ${quoted(schema)}.${fn.name} TO ${quoted(login)};`,
    });
  return problems;
}

function rowLevelSecurityReasons(row: CatalogRow): string[] {
  const reasons: string[] = [];
  if (row.superuser) reasons.push('it is a superuser');
  if (row.bypass_rls) reasons.push('it has BYPASSRLS');
  for (const table of row.tables) {
    if (!table.rls) reasons.push(`${table.table} has row-level security disabled`);
    else if (table.owned && !table.forced)
      reasons.push(`it owns ${table.table}, whose row-level security is not forced`);
  }
  return reasons;
}

/** What `createAgentHistory` does when its role would bypass row-level security: refuse (throw) or warn once. */
export type RowLevelSecurityCheck = 'refuse' | 'warn';

/**
 * {@link checkSetup} run once (on the store's first call, or `ready()`), then remembered: throws
 * {@link DatabaseSetupError} for a database that is not set up for the login, {@link RowLevelSecurityBypassError}
 * when row-level security would not hold (`'refuse'`; `'warn'` logs it once). A check that could not run (the
 * database unreachable) is not remembered: the next call checks again.
 */
export function onceSetupCheck(
  db: AgentHistoryDatabase,
  tables: AgentTables,
  appRole: string | null,
  mode: RowLevelSecurityCheck,
  warn: (message: string) => void = console.warn,
): () => Promise<void> {
  let checked: Promise<void> | undefined;
  const run = async () => {
    const { report, bypassReasons } = await inspectSetup(db, { tables, appRole });
    const setup = report.problems.filter((problem) => problem.code !== 'row-level-security-bypassed');
    if (setup.length > 0) throw new DatabaseSetupError({ login: report.login, problems: setup });
    if (report.ok) return;
    const error = new RowLevelSecurityBypassError({ role: report.role, reasons: bypassReasons });
    if (mode === 'refuse') throw error;
    warn(`agent-history: ${error.message}`);
  };
  return () =>
    (checked ??= run().catch((error: unknown) => {
      if (!(error instanceof RowLevelSecurityBypassError) && !(error instanceof DatabaseSetupError))
        checked = undefined;
      throw error;
    }));
}
