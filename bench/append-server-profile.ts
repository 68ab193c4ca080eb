// Where the server's time goes in an append: pg_stat_statements (track = all, so the statements inside the append
// function and the search-vector trigger count on their own) over 2,000 appends after a warm-up, one appender, 50
// threads, no write combining, per search mode. `npx tsx bench/append-server-profile.ts` (BENCH_APPEND_COUNT, 2,000).
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { MessageFactory } from './messages.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { SearchIndexing } from '../src/store/store-context-parts.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 2_000);

async function main() {
  const server = await startBenchServer({ profile: true, synchronousCommit: null });
  const factory = new MessageFactory({ seed: 42 });
  try {
    for (const search of ['inline', false] as SearchIndexing[]) {
      const database = `bench_server_profile_${search === false ? 'off' : search}`;
      await server.createDatabase(database, { migrated: true });
      const admin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
      await admin`create extension if not exists pg_stat_statements`;
      const client = postgres(server.appUrl(database), { max: 1, onnotice: () => {} });
      const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
      const store = createAgentHistory({ db, search, appendBatching: false }).forTenant(randomUUID());
      const threads: string[] = [];
      for (let index = 0; index < 50; index++) threads.push((await store.createThread()).id);
      for (let k = 0; k < 500; k++) await store.appendMessage(threads[k % 50]!, factory.make(k));
      await admin`select pg_stat_statements_reset()`;
      for (let k = 0; k < count; k++) await store.appendMessage(threads[k % 50]!, factory.make(1_000 + k));
      const rows = await admin<{ query: string; calls: string; ms: number; wal: string; top: boolean }[]>`
        select left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as query, calls::text, total_exec_time::float8 as ms,
          wal_bytes::text as wal, toplevel as top
        from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
        order by total_exec_time desc limit 8`;
      console.log(`\nsearch ${search === false ? 'false' : `'${search}'`}, ${count} appends`);
      console.log(
        '| statement | level | calls per append | ms per append | WAL B per append |\n| --- | --- | --- | --- | --- |',
      );
      for (const row of rows)
        console.log(
          `| \`${row.query.replaceAll('|', '\\|')}\` | ${row.top ? 'top' : 'nested'} | ${(Number(row.calls) / count).toFixed(2)} | ${(row.ms / count).toFixed(3)} | ${Math.round(Number(row.wal) / count)} |`,
        );
      await client.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    }
  } finally {
    server.stop();
  }
}

runMain(main);
