import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createAgentHistory, migrate, type AgentHistory, type AgentHistoryDatabase } from 'agent-history';

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
  // The library's start-up check: migrated, the login a member of agent_history_app with what it needs, row-level
  // security holding. It throws DatabaseSetupError naming each fix (lib/errors.ts answers 503 with it).
  await history.ready();
  return { db, history, server };
}
