import type { AgentHistoryDatabase } from '../tenant/database.js';
import { CliError } from './cli-error.js';

/** A Drizzle database on one connection, and the function that closes it. */
export interface Connection {
  db: AgentHistoryDatabase;
  close: () => Promise<void>;
}

const isMissingModule = (error: unknown) =>
  (error as { code?: unknown })?.code === 'ERR_MODULE_NOT_FOUND' ||
  (error as { code?: unknown })?.code === 'MODULE_NOT_FOUND';

/**
 * Connects to `url` with the driver the project has: `postgres` (postgres.js), else `pg` (node-postgres), each
 * through drizzle-orm's own adapter, loaded only when used. One connection; server notices are not printed.
 */
export async function connect(url: string): Promise<Connection> {
  try {
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const db = drizzle({ connection: { url, max: 1, onnotice: () => {} } });
    return { db: db as unknown as AgentHistoryDatabase, close: () => db.$client.end() };
  } catch (error) {
    if (!isMissingModule(error)) throw error;
  }
  try {
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const db = drizzle({ connection: { connectionString: url, max: 1 } });
    return { db: db as unknown as AgentHistoryDatabase, close: () => db.$client.end() };
  } catch (error) {
    if (!isMissingModule(error)) throw error;
  }
  throw new CliError(
    'agent-history: found neither the postgres nor the pg package next to drizzle-orm. Install the driver your app ' +
      'uses (npm install postgres, or npm install pg).',
  );
}

/** The URL of `--url`, else of `DATABASE_URL`; a {@link CliError} (exit code 2) when there is none. */
export function databaseUrl(command: string, url: string | undefined): string {
  const found = url ?? process.env.DATABASE_URL;
  if (!found)
    throw new CliError(`agent-history ${command}: no database: pass --url postgres://… or set DATABASE_URL.`, 2);
  return found;
}
