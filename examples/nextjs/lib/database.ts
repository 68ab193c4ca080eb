import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createAgentHistory, migrate, type AgentHistory, type AgentHistoryDatabase } from 'agent-history';

/**
 * The store, opened once per server process: PGlite in `.pglite/` by default (a file-backed embedded
 * Postgres: nothing to install), or the Postgres server of DATABASE_URL. Migrations run at first use.
 */
export async function getAgentHistory(): Promise<AgentHistory> {
  return (await opened()).history;
}

/** The Drizzle database under the store, for the example's read-only reports (lib/inspector.ts, lib/turns.ts). */
export async function getDatabase(): Promise<AgentHistoryDatabase> {
  return (await opened()).db;
}

interface Opened {
  db: AgentHistoryDatabase;
  history: AgentHistory;
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
  let db: AgentHistoryDatabase;
  if (process.env.DATABASE_URL) {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    db = drizzle({
      client: postgres(process.env.DATABASE_URL, { max: 10, onnotice: () => {} }),
    }) as unknown as AgentHistoryDatabase;
  } else {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const dataDir = process.env.PGLITE_DIR ?? join(process.cwd(), '.pglite');
    mkdirSync(dataDir, { recursive: true });
    db = drizzle({ client: await PGlite.create({ dataDir }) }) as unknown as AgentHistoryDatabase;
  }
  await migrate(db);
  return { db, history: createAgentHistory({ db }) };
}
