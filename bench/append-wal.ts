// Where an append's WAL goes, record type by record type (pg_walinspect's pg_get_wal_stats, PostgreSQL 15), per
// search indexing mode and against a bare INSERT of the same payload: one appender, 50 threads, after a warm-up
// (so no full-page images of pages the warm-up touched). `npx tsx bench/append-wal.ts` (BENCH_APPEND_COUNT, 500;
// BENCH_WAL_DDL: statements separated by `;` run as the owner after migrating, e.g. a GIN storage parameter).
// Also how many of the thread row's updates were HOT (pg_stat_user_tables, after a stats flush).
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { MessageFactory } from './messages.js';
import { bareInsertPeer } from './peers/bare-insert-peer.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { SearchIndexing } from '../src/store/store-context-parts.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 500);
const THREADS = 50;

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  const factory = new MessageFactory({ seed: 42 });
  try {
    await server.createDatabase('bench_wal', { migrated: true });
    const admin = postgres(server.adminUrl('bench_wal'), { max: 1, onnotice: () => {} });
    await admin`create extension if not exists pg_walinspect`;
    for (const statement of (process.env.BENCH_WAL_DDL ?? '').split(';').filter((text) => text.trim() !== ''))
      await admin.unsafe(statement);
    const client = postgres(server.appUrl('bench_wal'), { max: 1, onnotice: () => {} });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    const bare = await bareInsertPeer({ adminUrl: server.adminUrl('bench_wal'), poolSize: 1 });
    const variants: Array<[string, (k: number) => Promise<unknown>]> = [];
    const bareThreads = Array.from({ length: THREADS }, () => randomUUID());
    variants.push(['bare INSERT', (k) => bare.append(bareThreads[k % THREADS]!, factory.make(k))]);
    for (const search of ['inline', 'deferred', false] as SearchIndexing[]) {
      const store = createAgentHistory({ db, search, appendBatching: false }).forTenant(randomUUID());
      const threads: string[] = [];
      for (let index = 0; index < THREADS; index++) threads.push((await store.createThread()).id);
      variants.push([
        `search ${search === false ? 'false' : `'${search}'`}`,
        (k) => store.appendMessage(threads[k % THREADS]!, factory.make(k)),
      ]);
      if (search === 'deferred')
        variants.push(['indexPendingMessages (per message)', () => store.indexPendingMessages({ limit: 500 })]);
    }
    for (const [, operation] of variants) for (let k = 0; k < count; k++) await operation(k); // warm-up
    for (const [label, operation] of variants) {
      const hotBefore = await threadUpdates(admin);
      const [{ lsn: start }] = await admin`select pg_current_wal_flush_lsn()::text as lsn`;
      let operations = count;
      if (label.startsWith('index')) {
        operations = 0;
        for (;;) {
          const { indexed } = (await operation(0)) as { indexed: number };
          if (indexed === 0) break;
          operations += indexed;
        }
      } else for (let k = 0; k < count; k++) await operation(count + k);
      const [{ lsn: end }] = await admin`select pg_current_wal_flush_lsn()::text as lsn`;
      const stats = await admin<{ record_type: string; count: string; record_size: string; fpi_size: string }[]>`
        select "resource_manager/record_type" as record_type, count::text, record_size::text, fpi_size::text
        from pg_get_wal_stats(${start}::pg_lsn, ${end}::pg_lsn, true) where count > 0
        order by record_size + fpi_size desc`;
      const total = stats.reduce((sum, row) => sum + Number(row.record_size) + Number(row.fpi_size), 0);
      const hot = await threadUpdates(admin);
      console.log(
        `\n${label}: ${Math.round(total / Math.max(operations, 1))} B per operation (${operations}); ` +
          `agent_thread updates ${hot.updates - hotBefore.updates}, of them HOT ${hot.hot - hotBefore.hot}`,
      );
      for (const row of stats) {
        const bytes = (Number(row.record_size) + Number(row.fpi_size)) / Math.max(operations, 1);
        if (bytes >= 5 || row.record_type.includes('HOT'))
          console.log(
            `  ${row.record_type.padEnd(28)} ${(Number(row.count) / operations).toFixed(2).padStart(6)} records ${Math.round(bytes).toString().padStart(6)} B (fpi ${Math.round(Number(row.fpi_size) / operations)})`,
          );
      }
    }
    await client.end({ timeout: 5 });
    await bare.sql.end({ timeout: 5 });
    await admin.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

/** The thread table's updates and HOT updates so far (the stats of other backends reach the view within a second). */
async function threadUpdates(admin: postgres.Sql): Promise<{ updates: number; hot: number }> {
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await admin`select pg_stat_clear_snapshot()`;
  const [row] = await admin<{ updates: string; hot: string }[]>`
    select n_tup_upd::text as updates, n_tup_hot_upd::text as hot from pg_stat_user_tables where relname = 'agent_thread'`;
  return { updates: Number(row?.updates ?? 0), hot: Number(row?.hot ?? 0) };
}

runMain(main);
