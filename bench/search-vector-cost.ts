// What the search vector of an append costs the server, and what cheaper ways to make it would save: W1's payloads
// (2,000 messages) in a table of their own, each expression run over all of them in one statement, five rounds,
// median per message. First the parts of the vector read in a SELECT (the text parts' extraction, then
// `to_tsvector`), then the vector written by a trigger as the store's is, against variants of that trigger and of the
// vector column's storage; every variant's vectors are checked equal to the store's.
//
//   npx tsx bench/search-vector-cost.ts
import postgres from 'postgres';
import { MessageFactory } from './messages.js';
import { startBenchServer } from './server.js';
import { runMain } from './run-main.js';

const COUNT = 2_000;
const EXTRACT = `jsonb_path_query_array(p::jsonb, 'strict $[*] ? (@.type == "text").text')`;
const READS: Record<string, string> = {
  'the parts as text (the json column read)': `length(p::text)`,
  'the text parts extracted (jsonb and a JSON path)': EXTRACT,
  'the whole vector (extraction and to_tsvector)': `to_tsvector('simple'::regconfig, ${EXTRACT})`,
};

const ONE_EXPRESSION = `BEGIN
  IF current_setting('agent_history.search', true) = 'deferred' OR NEW.search_version = -1 THEN
    RETURN NEW;
  END IF;
  NEW.search_version := 1::smallint;
  NEW.search_vector := to_tsvector('simple'::regconfig,
    jsonb_path_query_array(NEW.parts::jsonb, 'strict $[*] ? (@.type == "text").text'));
  RETURN NEW;
END`;
const TRIGGERS: { name: string; body: string; alter?: string }[] = [
  { name: 'no vector (a trigger that returns the row)', body: 'BEGIN RETURN NEW; END' },
  { name: "the store's trigger (its body read from the migrated database)", body: 'STORE' },
  { name: 'one expression, the version a constant, no length check', body: ONE_EXPRESSION },
  {
    name: 'the same, the vector column compressed with lz4',
    body: ONE_EXPRESSION,
    alter: 'alter column search_vector set compression lz4',
  },
  {
    name: 'the same, the vector column stored uncompressed (external)',
    body: ONE_EXPRESSION,
    alter: 'alter column search_vector set storage external',
  },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const server = await startBenchServer({});
  const factory = new MessageFactory({ seed: 42 });
  try {
    await server.createDatabase('bench_search_vector', { migrated: true });
    const sql = postgres(server.adminUrl('bench_search_vector'), { max: 1, onnotice: () => {} });
    await sql`create table sample (k int, p json not null)`;
    for (let k = 0; k < COUNT; k++)
      await sql.unsafe('insert into sample values ($1, $2::text::json)', [k, JSON.stringify(factory.make(k).parts)]);
    // The store's own trigger function, as migrated: its body, not a copy of it.
    const [{ storeBody }] = await sql<{ storeBody: string }[]>`select prosrc as "storeBody" from pg_proc
      where proname = 'agent_history_message_search_vector'`;
    for (const [index, trigger] of TRIGGERS.entries()) {
      const { alter } = trigger;
      const body = trigger.body === 'STORE' ? storeBody : trigger.body;
      await sql.unsafe(`create function trigger_${index}() returns trigger language plpgsql
        set search_path = pg_catalog, pg_temp as $body$${body}$body$`);
      await sql.unsafe(
        `create table written_${index} (k int, parts json, search_vector tsvector, search_version smallint)`,
      );
      await sql.unsafe(`alter table written_${index} alter column parts set compression lz4`);
      if (alter) await sql.unsafe(`alter table written_${index} ${alter}`);
      await sql.unsafe(`create trigger vector before insert on written_${index}
        for each row execute function trigger_${index}()`);
    }
    const timed = async (statement: string) => {
      const started = performance.now();
      await sql.unsafe(statement);
      return (performance.now() - started) / COUNT;
    };
    const reads = new Map<string, number[]>();
    const writes = new Map<number, number[]>();
    for (let round = 0; round < 5; round++) {
      for (const [name, expression] of Object.entries(READS)) {
        const ms = await timed(`select count(${expression}) from sample`);
        reads.set(name, [...(reads.get(name) ?? []), ms]);
      }
      for (const index of TRIGGERS.keys()) {
        await sql.unsafe(`truncate written_${index}`);
        const ms = await timed(`insert into written_${index} (k, parts) select k, p from sample`);
        writes.set(index, [...(writes.get(index) ?? []), ms]);
      }
    }
    const [{ bytes }] = await sql<{ bytes: number }[]>`select avg(octet_length(p::text))::int as bytes from sample`;
    console.log(`${COUNT} messages of W1, parts ${bytes} B on average; ms per message, median of 5 rounds\n`);
    console.log('| read in a SELECT | ms |\n| --- | --- |');
    for (const [name, values] of reads) console.log(`| ${name} | ${median(values).toFixed(3)} |`);
    console.log('\n| written by a trigger | ms | vectors equal to the store trigger’s |\n| --- | --- | --- |');
    for (const [index, { name }] of TRIGGERS.entries()) {
      const [{ differ }] = await sql.unsafe<{ differ: number }[]>(
        `select count(*)::int as differ from written_1 a join written_${index} b using (k)
         where a.search_vector is distinct from b.search_vector`,
      );
      const equal = index === 0 ? '–' : differ === 0 ? 'yes' : `NO (${differ} differ)`;
      console.log(`| ${name} | ${median(writes.get(index)!).toFixed(3)} | ${equal} |`);
    }
    await sql.end();
  } finally {
    server.stop();
  }
}

runMain(main);
