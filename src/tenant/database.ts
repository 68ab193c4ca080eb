import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * Any Drizzle Postgres database or transaction: postgres-js, node-postgres, PGlite, Neon, …
 * The store never reaches past Drizzle to the driver.
 */
export type AgentHistoryDatabase = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/** The rows of `db.execute()`: postgres-js returns an array, PGlite and node-postgres `{ rows }`. */
export function rowsOf<ROW>(result: unknown): ROW[] {
  if (Array.isArray(result)) return result as ROW[];
  return ((result as { rows?: ROW[] }).rows ?? []) as ROW[];
}
