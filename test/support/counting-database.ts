import type { Logger } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';

/** The same connection(s) as `db` (PGlite, or postgres-js for any other backend), with every statement Drizzle sends kept in `sent`. */
export function countingDatabase(db: AgentHistoryDatabase, backend: string) {
  const sent: string[] = [];
  const logger: Logger = { logQuery: (query) => void sent.push(query) };
  const client = (db as unknown as { $client: never }).$client;
  const counted = (backend === 'pglite'
    ? drizzlePglite({ client, logger })
    : drizzlePostgres({ client, logger })) as unknown as AgentHistoryDatabase;
  return { db: counted, sent };
}
