/**
 * Planner statistics for PGlite, which runs Postgres in single-user mode: no autovacuum runs there, so a table's
 * statistics are gathered only when somebody runs ANALYZE, and without them the planner guesses. Its guesses for an
 * append walk the tenant's threads (the thread's counter row found through the thread list's index, every thread of
 * the tenant read and filtered) and the thread's messages (the idempotency look-up through the sequence index, every
 * message of the thread read and filtered): the cost of an append then grows with the tenant and the thread. So the
 * store does what autovacuum would: after every {@link CHECK_EVERY} appended messages (and after the first append of
 * the process, for a database that was loaded from a dump and never analyzed) it looks, in one catalog query, for
 * the store's tables of 64 kB or more that were never analyzed or have grown by a fifth since, and analyzes those.
 * It runs after the append has answered, in PGlite's queue like any other statement (after a transaction the app
 * has open, never inside it), and never fails the append: a failure (a closed database) is dropped, and the tables
 * of a login that does not own them are skipped by ANALYZE (with a warning that `exec` passes to no one).
 */

/** What the statistics keeping uses of a PGlite instance. */
export interface StatisticsClient {
  exec(query: string): Promise<Array<{ rows: unknown[] }>>;
}

/** The size (in 8 kB pages) below which a table is not analyzed. */
export const MIN_PAGES = 8;

/** Appended messages between two looks at the catalog. */
export const CHECK_EVERY = 512;

interface Upkeep {
  /** Messages appended since the last look began (the ones appended during a look count towards the next). */
  appended: number;
  /** A look (and its ANALYZE) is under way: no other starts meanwhile. */
  running: Promise<void> | null;
}

/**
 * Per PGlite instance, per set of tables by their names (stores of two schemas on one instance each keep their own;
 * a store made anew for each request shares its schema's).
 */
const upkeeps = new WeakMap<object, Map<string, Upkeep>>();
/** Each tables list's key, joined once per list rather than on every append. */
const keys = new WeakMap<readonly string[], string>();

/**
 * Notes `messages` appended through `client` to the store's `tables` (qualified, quoted names) and, when it is time,
 * analyzes those of them that need it, in the background. Returns the look when one was started (for tests), else
 * null.
 */
export function noteEmbeddedAppends(
  client: StatisticsClient,
  tables: readonly string[],
  messages: number,
): Promise<void> | null {
  let byTables = upkeeps.get(client);
  if (byTables === undefined) upkeeps.set(client, (byTables = new Map()));
  let key = keys.get(tables);
  if (key === undefined) keys.set(tables, (key = tables.join(',')));
  let upkeep = byTables.get(key);
  const first = upkeep === undefined;
  if (upkeep === undefined) byTables.set(key, (upkeep = { appended: 0, running: null }));
  upkeep.appended += messages;
  if (upkeep.running !== null || (!first && upkeep.appended < CHECK_EVERY)) return null;
  upkeep.appended = 0;
  const own = upkeep;
  own.running = analyzeStaleTables(client, tables)
    .catch(() => {
      // Statistics are an optimisation: a closed database or a refused ANALYZE must not surface in an append.
    })
    .finally(() => {
      own.running = null;
    });
  return own.running;
}

/**
 * Analyzes those of `tables` of at least {@link MIN_PAGES} pages that have no statistics (never analyzed: a table
 * that was vacuumed or indexed after its rows were loaded, as a restored dump is, has its size in the catalog but no
 * statistics), or have grown by a fifth and {@link MIN_PAGES} pages since their last analysis (autovacuum's rule is a
 * tenth of the rows and 50 more, from the statistics collector, which single-user mode does not run; the pages are
 * what the catalog keeps without it). A smaller table is read whole by the worst plan at little cost, and a fifth
 * keeps the analyses of a growing database few: eight of them took 3.4 % of the first 2,000 appends of a fresh
 * database at a tenth and one page.
 */
export async function analyzeStaleTables(client: StatisticsClient, tables: readonly string[]): Promise<void> {
  if (tables.length === 0) return;
  // E'' strings read the same whatever standard_conforming_strings says.
  const names = tables.map((name) => `E'${name.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`).join(', ');
  const [result] = await client.exec(
    `select coalesce(string_agg(c.oid::pg_catalog.regclass::text || ' (' || k.columns || ')', ', ' order by c.oid), '')
       as grown
     from unnest(array[${names}]::text[]) as t(name)
     join pg_catalog.pg_class c on c.oid = pg_catalog.to_regclass(t.name)
     join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     cross join lateral (select pg_catalog.pg_relation_size(c.oid) / pg_catalog.current_setting('block_size')::bigint as pages) s
     cross join lateral (
       select pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' order by a.attnum) as columns
       from pg_catalog.pg_attribute a
       where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
         and a.atttypid not in ('pg_catalog.tsvector'::pg_catalog.regtype, 'pg_catalog.json'::pg_catalog.regtype,
           'pg_catalog.jsonb'::pg_catalog.regtype)
     ) k
     where s.pages >= ${MIN_PAGES} and (
       s.pages >= c.relpages * 1.2 + ${MIN_PAGES}
       or not exists (select from pg_catalog.pg_stats st where st.schemaname = n.nspname and st.tablename = c.relname))`,
  );
  const grown = (result?.rows[0] as { grown?: unknown } | undefined)?.grown;
  // A sample of 3,000 rows (a statistics target of 10, for this statement only) rather than 30,000: 20 ms where the
  // default took 300-400 ms for 100,000 messages, PGlite answering nothing else meanwhile, and enough for the
  // planner to see that a thread or a message id is selective. The columns the store's plans choose their indexes
  // by: not the search vector, the parts or the metadata, whose statistics took half of an analysis (a search's text
  // match is then estimated with Postgres's default selectivity, as it was before the store kept any statistics).
  if (typeof grown === 'string' && grown !== '')
    await client.exec(`select pg_catalog.set_config('default_statistics_target', '10', true); analyze ${grown}`);
}
