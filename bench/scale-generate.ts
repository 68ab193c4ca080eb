// The scale note's generator: adds messages to every `scale` thread with SQL (no API), fast enough for 10M on two
// shared cores, and leaves `agent_message` exactly as the migrations define it. What makes it fast:
//  - the indexes an insert would update at random (the primary key, the two per-thread unique indexes, the GIN)
//    and the thread foreign keys (a key-share row lock on the thread per row) are dropped for the load and rebuilt
//    after: one sort per index instead of 10M random inserts into indexes far larger than shared_buffers. The
//    partial indexes stay (no generated row matches their predicate) and so do the foreign keys whose columns
//    are null (their per-row check returns at once);
//  - the search-vector trigger is disabled: each template's vector is computed once, with the trigger's
//    expression (checked against the trigger itself afterwards), and copied;
//  - autovacuum is off for the table during the load; two sessions insert at once, one statement per sequence
//    number (every thread's k-th message), so a thread's messages are spread over the heap as chat traffic spreads
//    them, not stored side by side;
//  - after the load: VACUUM of the heap and of its TOAST table in parallel (the hint bits, once), the indexes built
//    in two sessions (the GIN in one, the b-trees with parallel workers in the other), the constraints re-added
//    and validated, the trigger and autovacuum restored, VACUUM ANALYZE, CHECKPOINT. The catalog (every index
//    and constraint definition, validation, trigger state, reloptions) is compared with the migrated one, and
//    the run stops if anything differs.
import postgres from 'postgres';

type Sql = postgres.Sql;
const log = (...parts: unknown[]) => console.log(...parts);

/** Indexes dropped for the load (the primary key is dropped as a constraint). */
const DROPPED_INDEXES = [
  'agent_message_thread_sequence_uidx',
  'agent_message_thread_message_id_uidx',
  'agent_message_search_idx',
];
/** Foreign keys dropped for the load: the one a generated row would check, and the one on the primary key. */
const DROPPED_FOREIGN_KEYS = [
  ['agent_message', 'agent_message_thread_fk'],
  ['agent_stream_chunk', 'agent_stream_chunk_message_fk'],
] as const;
const TRIGGER = 'agent_message_search_vector';

/** Sessions for the load: superuser, with the bulk-load memory settings (session-local). */
export function loadSessions(url: string, count: number): Sql[] {
  return Array.from({ length: count }, () =>
    postgres(url, {
      max: 1,
      onnotice: () => {},
      connection: { maintenance_work_mem: '1GB', work_mem: '256MB', synchronous_commit: 'off' },
    }),
  );
}

/** What must be equal before and after a load: every definition, validation and trigger state of the message tables. */
export async function catalogSnapshot(sql: Sql): Promise<string[]> {
  const rows = await sql<{ line: string }[]>`
    select 'index ' || pg_get_indexdef(i.indexrelid) || ' valid=' || i.indisvalid as line from pg_index i
      where i.indrelid in ('agent_message'::regclass, 'agent_stream_chunk'::regclass)
    union all select 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      || ' validated=' || convalidated || ' index=' || conindid::regclass::text from pg_constraint
      where conrelid in ('agent_message'::regclass, 'agent_stream_chunk'::regclass)
    union all select 'trigger ' || coalesce((select 'of ' || conname from pg_constraint where oid = tgconstraint),
      tgname) || ' type=' || tgtype || ' ' || tgenabled::text from pg_trigger where tgrelid = 'agent_message'::regclass
    union all select 'reloptions ' || coalesce(reloptions::text, '-') from pg_class
      where oid in ('agent_message'::regclass, 'agent_stream_chunk'::regclass)
    order by 1`;
  return rows.map((row) => row.line);
}

/** Adds each template's search vector, computed with the search vector trigger's expression, to `bench_template`. */
export async function addTemplateVectors(sql: Sql) {
  await sql.unsafe(`alter table bench_template add column if not exists search_vector tsvector`);
  await sql.unsafe(`update bench_template set search_vector =
    to_tsvector('simple'::regconfig, jsonb_path_query_array(parts::jsonb, 'strict $[*] ? (@.type == "text").text'))`);
  const [{ large }] = await sql<{ large: number }[]>`select count(*)::int as large from bench_template
    where octet_length(jsonb_path_query_array(parts::jsonb, 'strict $[*] ? (@.type == "text").text')::text) > 250000`;
  if (large > 0) throw new Error(`${large} templates exceed the trigger's 250,000-byte text limit`);
}

interface Definitions {
  indexes: string[];
  primaryKey: string;
  foreignKeys: { table: string; name: string; definition: string }[];
}

async function definitions(sql: Sql): Promise<Definitions> {
  const indexes = await sql<{ definition: string }[]>`select pg_get_indexdef(indexrelid) as definition from pg_index
    where indexrelid::regclass::text in ${sql(DROPPED_INDEXES)}`;
  const [pk] = await sql<{ definition: string }[]>`select pg_get_indexdef(conindid) as definition from pg_constraint
    where conrelid = 'agent_message'::regclass and conname = 'agent_message_pk'`;
  const foreignKeys = await sql<{ table: string; name: string; definition: string }[]>`
    select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as definition
    from pg_constraint where conname in ${sql(DROPPED_FOREIGN_KEYS.map(([, name]) => name))}`;
  if (indexes.length !== DROPPED_INDEXES.length || !pk || foreignKeys.length !== DROPPED_FOREIGN_KEYS.length)
    throw new Error('the schema does not have the indexes and constraints the generator drops');
  return { indexes: indexes.map((row) => row.definition), primaryKey: pk.definition, foreignKeys };
}

async function dropForLoad(sql: Sql) {
  await sql.unsafe(`alter table agent_message set (autovacuum_enabled = false)`);
  await sql.unsafe(`alter table agent_message disable trigger ${TRIGGER}`);
  for (const [table, name] of DROPPED_FOREIGN_KEYS) await sql.unsafe(`alter table ${table} drop constraint ${name}`);
  await sql.unsafe(`alter table agent_message drop constraint agent_message_pk`);
  await sql.unsafe(`drop index ${DROPPED_INDEXES.join(', ')}`);
}

/** One statement per sequence offset `q` (every scale thread's next message), spread over the sessions. */
async function insertMessages(sessions: Sql[], perThread: number, counterId: string, rows: number) {
  const started = performance.now();
  let next = 1;
  let done = 0;
  await Promise.all(
    sessions.map(async (sql) => {
      for (let q = next++; q <= perThread; q = next++) {
        await sql.unsafe(
          `insert into agent_message (tenant_id, thread_id, sequence, message_id, role, status, parts, metadata,
             byte_size, token_count, token_counter_id, search_vector, completed_at)
           select th.tenant_id, th.id, th.next_sequence + $1, 'scale-' || th.id || '-' || (th.next_sequence + $1),
             t.role, 'completed', t.parts, '{}'::jsonb, t.byte_size, t.token_count, $2, t.search_vector, now()
           from agent_thread th join bench_template t on t.idx = (hashtext(th.id::text) + th.next_sequence + $1) & 255
           where th.title = 'scale'`,
          [q, counterId],
        );
        done++;
        if (done % 10 === 0 || done === perThread) {
          const seconds = (performance.now() - started) / 1000;
          log(`  inserted ${((done / perThread) * rows).toLocaleString('en-US')} rows in ${seconds.toFixed(0)} s`);
        }
      }
    }),
  );
  await sessions[0]!.unsafe(
    `update agent_thread set next_sequence = next_sequence + $1, last_message_at = now()
    where title = 'scale'`,
    [perThread],
  );
}

async function restoreAfterLoad(sessions: Sql[], defs: Definitions) {
  const [a, b] = [sessions[0]!, sessions[1] ?? sessions[0]!];
  const [{ toast }] = await a<{ toast: string }[]>`select reltoastrelid::regclass::text as toast from pg_class
    where oid = 'agent_message'::regclass`;
  const timed = async (label: string, work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    log(`  ${label}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  };
  await Promise.all([
    timed('vacuum heap', () => a.unsafe(`vacuum (process_toast false) agent_message`)),
    timed('vacuum TOAST', () => b.unsafe(`vacuum ${toast}`)),
  ]);
  const gin = defs.indexes.find((definition) => / USING gin /.test(definition))!;
  const btrees = [defs.primaryKey, ...defs.indexes.filter((definition) => definition !== gin)];
  await Promise.all([
    timed('GIN index', () => a.unsafe(gin)),
    timed('b-tree indexes', async () => {
      for (const definition of btrees) await b.unsafe(definition);
    }),
  ]);
  await timed('constraints', async () => {
    await a.unsafe(
      `alter table agent_message add constraint agent_message_pk primary key using index agent_message_pk`,
    );
    for (const key of defs.foreignKeys)
      await a.unsafe(`alter table ${key.table} add constraint ${key.name} ${key.definition}`);
  });
  await a.unsafe(`alter table agent_message enable trigger ${TRIGGER}`);
  await a.unsafe(`alter table agent_message reset (autovacuum_enabled)`);
  await timed('vacuum analyze', () => a.unsafe('vacuum analyze'));
  await timed('checkpoint', () => a.unsafe('checkpoint'));
}

/**
 * Adds `perThread` messages to each of the `threads` scale threads (drop, load, rebuild, as above) and returns
 * the seconds it took. Throws if the catalog afterwards differs from `migrated` (a {@link catalogSnapshot}).
 */
export async function generateMessages(
  sessions: Sql[],
  {
    perThread,
    threads,
    counterId,
    migrated,
  }: { perThread: number; threads: number; counterId: string; migrated: string[] },
): Promise<number> {
  const started = performance.now();
  const sql = sessions[0]!;
  const defs = await definitions(sql);
  await dropForLoad(sql);
  await insertMessages(sessions, perThread, counterId, perThread * threads);
  await restoreAfterLoad(sessions, defs);
  const after = await catalogSnapshot(sql);
  const differences = [
    ...migrated.filter((line) => !after.includes(line)).map((line) => `- ${line}`),
    ...after.filter((line) => !migrated.includes(line)).map((line) => `+ ${line}`),
  ];
  if (differences.length) throw new Error(`the catalog differs from the migrated one:\n${differences.join('\n')}`);
  return (performance.now() - started) / 1000;
}
