import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * Any Drizzle Postgres database or transaction: postgres-js, node-postgres, PGlite, Neon, …
 * The store never reaches past Drizzle to the driver, with one exception: on a PGlite database (not a transaction) the
 * append statements go to PGlite's `exec` (`src/store/execute-append.ts`).
 */
export type AgentHistoryDatabase = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/**
 * The rows of `db.execute()`: postgres-js returns an array, PGlite and node-postgres `{ rows }`.
 *
 * postgres-js (3.4.x) does not reset its row counter when a statement fails after sending some rows, so the next
 * statement on that connection answers with leading holes before its rows (porsager/postgres#1181). Every row is
 * there, after the holes, so they are closed up here. A transaction's own statements are not exposed: its BEGIN
 * resets the counter.
 */
export function rowsOf<ROW>(result: unknown): ROW[] {
  if (Array.isArray(result)) {
    for (let index = 0; index < result.length; index++)
      if (!(index in result)) return result.filter(() => true) as ROW[];
    return result as ROW[];
  }
  return ((result as { rows?: ROW[] }).rows ?? []) as ROW[];
}
