// CPU and WAL per append, which do not depend on how loaded the machine is, per search indexing mode
// (`createAgentHistory({ search })`) against a bare single-row INSERT of the same payload, one appender at a time
// over 50 threads (no write combining: one statement, one commit per append). Also what the deferred indexer costs
// per message, and the thread row's variants (the thread list indexed by minute, as migrated, or on last_message_at).
// `npx tsx bench/append-cost.ts` (BENCH_APPEND_COUNT appends per variant and round, default 1,000; a warm-up round, then 2 counted).
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { cpuMeter, cpuPerOperation } from './cpu.js';
import { MessageFactory } from './messages.js';
import { bareInsertPeer } from './peers/bare-insert-peer.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { SearchIndexing } from '../src/store/store-context-parts.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 1_000);
const THREADS = 50;

/** Thread-row variants: each in its own database. */
const SCHEMAS: Record<string, string[]> = {
  'as migrated (thread list indexed by minute)': [],
  'thread list indexed on last_message_at': [
    'drop index agent_thread_user_recent_idx',
    'drop index agent_thread_recent_idx',
    'create index agent_thread_user_recent_idx on agent_thread (tenant_id, user_id, last_message_at desc nulls last, id desc nulls last) where deleted_at is null',
    'create index agent_thread_recent_idx on agent_thread (tenant_id, last_message_at desc nulls last, id desc nulls last) where deleted_at is null',
  ],
};

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  const meter = cpuMeter(await server.postmasterPid(), () => server.walBytes());
  const factory = new MessageFactory({ seed: 42 });
  const rows: string[] = [];
  try {
    for (const [schemaLabel, ddl] of Object.entries(SCHEMAS)) {
      const database = `bench_append_${Object.keys(SCHEMAS).indexOf(schemaLabel)}`;
      await server.createDatabase(database, { migrated: true });
      const admin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
      for (const statement of ddl) await admin.unsafe(statement);
      const client = postgres(server.appUrl(database), { max: 1, onnotice: () => {} });
      const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
      const bare = await bareInsertPeer({ adminUrl: server.adminUrl(database), poolSize: 1 });
      const variants: Array<[string, (k: number) => Promise<unknown>]> = [];
      for (const search of ['inline', 'deferred', false] as SearchIndexing[]) {
        const store = createAgentHistory({ db, search, appendBatching: false }).forTenant(randomUUID());
        const threads: string[] = [];
        for (let index = 0; index < THREADS; index++) threads.push((await store.createThread()).id);
        variants.push([
          `agent-history search: ${search === false ? 'false' : `'${search}'`}`,
          (k) => store.appendMessage(threads[k % THREADS]!, factory.make(k)),
        ]);
        if (search === 'deferred') {
          variants.push([
            "indexPendingMessages({ limit: 500 }), per message indexed (of 'deferred')",
            async () => store.indexPendingMessages({ limit: 500 }),
          ]);
        }
      }
      if (ddl.length === 0) {
        const threads = Array.from({ length: THREADS }, () => randomUUID());
        variants.unshift(['bare INSERT', (k) => bare.append(threads[k % THREADS]!, factory.make(k))]);
      }
      const totals = new Map<string, { clientMs: number; serverMs: number; walBytes: number; operations: number }>();
      // Round 0 warms up, uncounted: after it every page the variants touch has had its full-page image since the
      // database's checkpoint, so the counted rounds compare the steady WAL of each variant (no checkpoint runs
      // during the bench: checkpoint_timeout is 30 min).
      await server.checkpoint();
      for (let round = 0; round < 3; round++) {
        for (const [label, operation] of variants) {
          const indexer = label.startsWith('indexPending');
          const before = await meter();
          let operations = 0;
          if (indexer) {
            // Per message indexed: call until the deferred rows of this round are all indexed.
            for (;;) {
              const { indexed } = (await operation(0)) as { indexed: number };
              if (indexed === 0) break;
              operations += indexed;
            }
          } else {
            for (let k = 0; k < count; k++) await operation(round * count + k);
            operations = count;
          }
          const cost = cpuPerOperation(before, await meter(), operations);
          if (round === 0) continue;
          const total = totals.get(label) ?? { clientMs: 0, serverMs: 0, walBytes: 0, operations: 0 };
          totals.set(label, {
            clientMs: total.clientMs + cost.clientMs * operations,
            serverMs: total.serverMs + cost.serverMs * operations,
            walBytes: total.walBytes + cost.walBytes * operations,
            operations: total.operations + operations,
          });
        }
      }
      for (const [label, total] of totals) {
        const per = (value: number) => (value / Math.max(total.operations, 1)).toFixed(3);
        rows.push(
          `| ${schemaLabel} | ${label} | ${per(total.clientMs)} | ${per(total.serverMs)} | ${Math.round(total.walBytes / Math.max(total.operations, 1))} |`,
        );
      }
      await client.end({ timeout: 5 });
      await bare.sql.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    }
    console.log('| schema | operation | client CPU ms | server CPU ms | WAL bytes |\n| --- | --- | --- | --- | --- |');
    console.log(rows.join('\n'));
  } finally {
    server.stop();
  }
}

runMain(main);
