import postgres from 'postgres';
import { inject } from 'vitest';
import { APP_LOGIN } from './global-setup.js';
import type { TestDatabase } from './test-database.js';

/** A statement as pg_stat_statements normalized it (constants become `$n`), and how often it ran. */
export interface RecordedStatement {
  query: string;
  calls: number;
}

/**
 * Every statement run in `database` as the app login or as the application role it switches to (pg_stat_statements
 * records the role current when the statement ran): what the store sent, not the test's own admin queries.
 */
export async function recordedStatements(database: TestDatabase): Promise<RecordedStatement[]> {
  const name = new URL(database.adminUrl!).pathname.slice(1);
  const admin = postgres(`${inject('postgresServerUrl')}/postgres`, { max: 1, onnotice: () => {} });
  try {
    return await admin.unsafe<RecordedStatement[]>(
      `select s.query, s.calls::int as calls
         from pg_stat_statements s
         join pg_database d on d.oid = s.dbid
         join pg_roles r on r.oid = s.userid
        where d.datname = $1 and r.rolname = any($2::text[])
        order by s.query`,
      [name, [APP_LOGIN, 'agent_history_app']],
    );
  } finally {
    await admin.end();
  }
}

/**
 * A reference to one of the store's tables (quoted or not): an `agent_*` name that is not a column's qualifier
 * (`"agent_message"."id"`), a type (`::agent_message_role`), a function or the role (`agent_history_*`).
 */
const TABLE = /(?<![.:\w"])"?(agent_(?!history_)[a-z_]+)"?(?![.\w("])/g;

/**
 * Statements that route to no tenant and need none, by rule (each named): transaction control, the statement that
 * sets the tenant (`set_config('app.tenant_id', …)`, its first argument), and reads of the system catalogs only
 * (the store's row-level security check, a driver's type lookup) that name none of the store's tables.
 */
const EXCEPTIONS: [string, RegExp | ((query: string) => boolean)][] = [
  [
    'transaction control',
    /^(begin( isolation level [a-z ]+)?|commit|rollback|start transaction.*|savepoint \S+|release( savepoint)? \S+|rollback to( savepoint)? \S+|set transaction isolation level [a-z ]+)$/,
  ],
  ['sets the tenant', /^select set_config\('app\.tenant_id', \$1, true\)/],
  // The same statement without a role switch (`appRole: null`, the setup check), as pg_stat_statements records it
  // when it normalizes the setting names to parameters too.
  [
    'sets the tenant (names normalized)',
    /^select set_config\(\$\d+, \$1, \$\d+\), set_config\(\$2, \$3, \$\d+\), set_config\(\$\d+, \$4, \$\d+\)(, set_config\(\$\d+, \$5, \$\d+\))?, current_setting\(\$\d+, \$\d+\) as citus_propagation$/,
  ],
  [
    'reads only the system catalogs',
    (query) =>
      /\bpg_catalog\.|\bpg_(roles|class|namespace|type)\b/.test(query) && !new RegExp(TABLE.source).test(query),
  ],
];

const UUID_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const TENANT_ARGUMENT = new RegExp(`^(?:\\$\\d+|'${UUID_TEXT}'|\\$([a-z_]*)\\$${UUID_TEXT}\\$\\1\\$)(?:::uuid)?$`, 'i');

/**
 * Why `query` (normalized by pg_stat_statements) does not route to one tenant, or null when it does: each of the
 * store's tables it reads or changes is filtered by `tenant_id = $n` (an insert names `tenant_id` among its
 * columns), or it calls a function whose first argument is the tenant (`functionsFirstArgument` maps each
 * `agent_history_*` function to its first parameter's name), or it is one of the {@link EXCEPTIONS}.
 */
export function routingProblem(query: string, functionsFirstArgument: Record<string, string>): string | null {
  const text = query.replace(/\s+/g, ' ').trim();
  for (const [, rule] of EXCEPTIONS) if (typeof rule === 'function' ? rule(text) : rule.test(text)) return null;
  const calls = [...text.matchAll(/\b(agent_history_[a-z_]+)\s*\(\s*([^,)]*)/g)];
  for (const [, name, first] of calls) {
    const parameter = functionsFirstArgument[name!];
    if (parameter === undefined) return `calls ${name}, which is not one of the store's functions`;
    if (!/tenant/.test(parameter)) return `calls ${name}, whose first parameter ${parameter} is not the tenant`;
    // A parameter, or the tenant's uuid written as a literal (the one-statement appends and reads send no parameters).
    if (!TENANT_ARGUMENT.test(first!.trim())) return `calls ${name} with ${first} as the tenant`;
  }
  const insert = /^insert into "?(agent_[a-z_]+)"? \(([^)]*)\)/.exec(text);
  if (insert && !/\btenant_id\b/.test(insert[2]!)) return `inserts into ${insert[1]} without a tenant_id`;
  const tables = [...text.matchAll(TABLE)]
    .map(([, table]) => table!)
    .filter((_table, index) => !(insert && index === 0));
  if (calls.length === 0 && !insert && tables.length === 0) return 'names none of the store tables and is no exception';
  // Each table must be filtered by its own tenant_id; an unqualified `tenant_id = $n` counts only when it is the one table.
  const distinct = new Set(tables);
  for (const table of distinct) {
    const own = new RegExp(`"?${table}"?\\."?tenant_id"?\\s*=\\s*\\$\\d+`).test(text);
    const only = distinct.size === 1 && /(?<![.\w])"?tenant_id"?\s*=\s*\$\d+/.test(text);
    if (!own && !only) return `reads ${table} without ${table}.tenant_id = $n`;
  }
  return null;
}

/**
 * Checks every statement the store sent in `database` (pg_stat_statements) routes to one tenant: the claim of
 * docs/citus.md, "Running on Citus". Returns what was checked, for the test to assert it is not empty.
 */
export async function statementsThatDoNotRoute(
  database: TestDatabase,
): Promise<{ checked: number; problems: { query: string; problem: string }[] }> {
  const statements = await recordedStatements(database);
  const functions = await database.admin.query<{ name: string; first: string }>(
    `select proname as name, proargnames[1] as first from pg_proc where proname like 'agent\\_history\\_%'`,
  );
  const firstArgument = Object.fromEntries(functions.map(({ name, first }) => [name, first]));
  const problems = statements.flatMap(({ query }) => {
    const problem = routingProblem(query, firstArgument);
    return problem === null ? [] : [{ query, problem }];
  });
  return { checked: statements.length, problems };
}
