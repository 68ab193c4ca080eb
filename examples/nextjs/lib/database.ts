import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createAgentHistory, migrate, type AgentHistory, type AgentHistoryDatabase } from 'agent-history';
import { DEFAULT_APP_ROLE } from 'agent-history/schema';
import { DatabaseNotReadyError } from './errors';

/**
 * The store, opened once per server process and checked before its first use (`checkDatabase`):
 * - with DATABASE_URL, the PostgreSQL server of that URL, as the app's login (a NOINHERIT member of
 *   agent_history_app: examples/nextjs/README.md, "Run it"). The app never migrates it: it cannot, and must not be
 *   able to. `npm run db:migrate` does, as the tables' owner (MIGRATION_DATABASE_URL, lib/migrate.mjs);
 * - else PGlite in `.pglite/` (a file-backed embedded Postgres: nothing to install), migrated here.
 * A failure (database down, not migrated, a grant missing) is thrown to the request, which answers 503
 * (lib/errors.ts), and the next request opens and checks again.
 */
export async function getAgentHistory(): Promise<AgentHistory> {
  return (await opened()).history;
}

/** The Drizzle database under the store, for the example's read-only reports (lib/inspector.ts, lib/turns.ts). */
export async function getDatabase(): Promise<AgentHistoryDatabase> {
  return (await opened()).db;
}

/**
 * Whether the database answers now: the store opened and checked, and (on a server) one round trip. The proxy asks
 * before a page renders, since a page cannot answer 503 itself once it runs (proxy.ts).
 */
export async function pingDatabase(): Promise<void> {
  const { db, server } = await opened();
  if (server) await db.execute(sql`select 1`);
}

interface Opened {
  db: AgentHistoryDatabase;
  history: AgentHistory;
  /** Whether it is a PostgreSQL server (DATABASE_URL), not the embedded PGlite. */
  server: boolean;
}

function opened(): Promise<Opened> {
  const cache = globalThis as { __agentHistory?: Promise<Opened> };
  cache.__agentHistory ??= open().catch((error: unknown) => {
    cache.__agentHistory = undefined;
    throw error;
  });
  return cache.__agentHistory;
}

async function open(): Promise<Opened> {
  if (process.env.DATABASE_URL) {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const client = postgres(process.env.DATABASE_URL, { max: 10, onnotice: () => {} });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    // A store that failed its first check remembers it: a failed start-up drops the pool and the store, and the next
    // request starts over with new ones.
    return ready(db, true).catch(async (error: unknown) => {
      await client.end({ timeout: 0 }).catch(() => {});
      throw error;
    });
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const dataDir = process.env.PGLITE_DIR ?? join(process.cwd(), '.pglite');
  mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create({ dataDir });
  const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
  try {
    // The embedded database belongs to this process, which is its owner: it migrates it.
    await migrate(db);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return ready(db, false).catch(async (error: unknown) => {
    await client.close().catch(() => {});
    throw error;
  });
}

async function ready(db: AgentHistoryDatabase, server: boolean): Promise<Opened> {
  const history = createAgentHistory({ db });
  await checkDatabase(db, history);
  return { db, history, server };
}

interface CheckRow {
  login: string;
  migrated: boolean;
  member: boolean | null;
  denied: string[];
}

// The functions the store appends with (README "Tenancy and the application role": EXECUTE is not granted to
// PUBLIC). It calls the newest signature of each.
const APPEND_FUNCTIONS = ['agent_history_append_message', 'agent_history_append_messages'];

/**
 * What every request needs, checked once before the first: the tables exist, the login may switch to the
 * application role and may execute the append functions (catalog reads, which any login may do), and one store
 * read as the application role works (which also runs the store's own row-level security check).
 */
async function checkDatabase(db: AgentHistoryDatabase, history: AgentHistory): Promise<void> {
  const result = await db.execute(sql`
    select current_user::text as login,
      to_regclass('agent_thread') is not null and exists (select from pg_proc where proname = ${APPEND_FUNCTIONS[1]})
        as migrated,
      (select pg_has_role(current_user, r.oid, 'MEMBER') from pg_roles r where r.rolname = ${DEFAULT_APP_ROLE})
        as member,
      array(select f.oid::regprocedure::text
        from (select distinct on (proname) oid from pg_proc where proname in (${sql.join(
          APPEND_FUNCTIONS.map((name) => sql`${name}`),
          sql`, `,
        )}) order by proname, pronargs desc) f
        where not has_function_privilege(f.oid, 'EXECUTE')) as denied`);
  const row = ((result as { rows?: CheckRow[] }).rows ?? (result as unknown as CheckRow[]))[0]!;
  if (!row.migrated || row.member === null)
    throw new DatabaseNotReadyError(
      'database-not-migrated',
      "The database is not migrated: run `npm run db:migrate` with MIGRATION_DATABASE_URL (the tables' owner).",
    );
  const missing = [
    ...(row.member ? [] : [`membership in ${DEFAULT_APP_ROLE}`]),
    ...row.denied.map((name) => `EXECUTE on ${name.replace(/\(.*/, '')}`),
  ];
  if (missing.length > 0)
    throw new DatabaseNotReadyError(
      'database-permission-denied',
      `The database login ${row.login} lacks ${missing.join(' and ')}: grant it what examples/nextjs/README.md, "Run it", says.`,
    );
  await history.forTenant('00000000-0000-4000-8000-000000000000').listThreads({ limit: 1 });
}
