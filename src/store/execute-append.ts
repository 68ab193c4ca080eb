import { DrizzleQueryError, is, type SQL } from 'drizzle-orm';
import { PgDialect, PgTransaction } from 'drizzle-orm/pg-core';
import { rowsOf, type AgentHistoryDatabase } from '../tenant/database.js';
import { noteEmbeddedAppends } from './embedded-statistics.js';

/** What the append uses of a PGlite instance: its simple-query `exec` (PGlite's own API). */
interface EmbeddedClient {
  exec(query: string): Promise<Array<{ rows: unknown[] }>>;
}

const dialect = new PgDialect();

/**
 * The PGlite instance under a Drizzle PGlite database (`drizzle({ client })`, its public `$client`), or null for
 * any other driver and for a transaction (whose statements must stay on the transaction).
 */
export function embeddedClient(db: AgentHistoryDatabase): EmbeddedClient | null {
  if (is(db, PgTransaction)) return null;
  const client = (db as { $client?: Record<string, unknown> }).$client;
  return client !== undefined &&
    client !== null &&
    typeof client.exec === 'function' &&
    typeof client.execProtocol === 'function'
    ? (client as unknown as EmbeddedClient)
    : null;
}

/**
 * Runs one append statement (`appendStatements`) and returns its rows. On PGlite, a statement made of literals
 * only (every append whose values hold no NUL) goes through PGlite's simple-query `exec`: one pass through the
 * in-process Postgres, where Drizzle's `query` takes two (Parse and Describe, then Bind and Execute), about
 * 0.1 ms of a lone append's 2 (`npx tsx bench/pglite-append-profile.ts`, in BENCHMARKS.md). PGlite runs it under the
 * same lock as every other statement. A failure is wrapped as Drizzle wraps it, so the store reports it alike.
 * Anything else goes through Drizzle. On PGlite, the `messages` appended are counted towards keeping the planner
 * statistics of `tables` (see {@link noteEmbeddedAppends}).
 */
export async function executeAppend<ROW>(
  db: AgentHistoryDatabase,
  statement: SQL,
  { tables, messages }: { tables: readonly string[]; messages: number },
): Promise<ROW[]> {
  const client = embeddedClient(db);
  if (client === null) return rowsOf<ROW>(await db.execute(statement));
  const query = dialect.sqlToQuery(statement);
  let rows: ROW[];
  if (query.params.length === 0) {
    let results: Array<{ rows: unknown[] }>;
    try {
      results = await client.exec(query.sql);
    } catch (error) {
      throw new DrizzleQueryError(query.sql, [], error as Error);
    }
    rows = (results.at(-1)?.rows ?? []) as ROW[];
  } else {
    rows = rowsOf<ROW>(await db.execute(statement));
  }
  noteEmbeddedAppends(client, tables, messages);
  return rows;
}
