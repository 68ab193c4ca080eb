// `loadContext` alone on W7's 600-message thread (~250k tokens, per-part counts stored), as the first call of a
// request reads it: on PGlite (in this process: its CPU is counted) and on the bench's PostgreSQL 15 cluster as the
// app login (client CPU of this process and server CPU of the cluster, per call). Also `listMessages` pages of 500.
//
//   npx tsx bench/workloads/w7-load-context.ts                       # BENCH_LOAD_CALLS=100, both backends
//   BENCH_LOAD_BACKENDS=pglite npx tsx bench/workloads/w7-load-context.ts
//   BENCH_LOAD_TAIL=50 npx tsx bench/workloads/w7-load-context.ts    # a 50-message tail (maxTailMessages)
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import { createAgentHistory, migrate } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import type { TenantHistory as TenantStore } from '../../src/store/tenant-history.js';
import { cpuMeter } from '../cpu.js';
import { openAgentHistory } from '../peers/agent-history-peer.js';
import { runMain } from '../run-main.js';
import { startBenchServer } from '../server.js';
import { summarize } from '../stats.js';
import { turn } from './w7-first-call.js';

const SIZE = 600;
const calls = Number(process.env.BENCH_LOAD_CALLS ?? 100);
const backends = (process.env.BENCH_LOAD_BACKENDS ?? 'pglite,postgres').split(',');
/** `maxTailMessages` of the load (the thread has 600 messages and no snapshot: the tail is all of them up to this). */
const maxTailMessages = Number(process.env.BENCH_LOAD_TAIL ?? 2000);

async function fill(store: TenantStore): Promise<string> {
  const thread = (await store.createThread()).id;
  let appended = 0;
  for (let index = 0; appended < SIZE - 1; index++)
    for (const message of turn(index))
      if (appended++ < SIZE - 1) await store.appendMessage(thread, message as never, { pinned: appended === 1 });
  await store.appendMessage(thread, { id: 'last', role: 'user', parts: [{ type: 'text', text: 'And next quarter?' }] });
  return thread;
}

/** Client CPU of this process per call; with `server`, the cluster's CPU per call too (read outside the client clock). */
async function time(label: string, operation: () => Promise<unknown>, server?: () => Promise<number>) {
  const client: number[] = [];
  let serverTotal = 0;
  for (let call = 0; call < calls + 5; call++) {
    const serverStarted = (await server?.()) ?? 0;
    const started = process.cpuUsage();
    await operation();
    const used = process.cpuUsage(started);
    const serverUsed = ((await server?.()) ?? 0) - serverStarted;
    if (call < 5) continue;
    client.push((used.user + used.system) / 1000);
    serverTotal += serverUsed;
  }
  const c = summarize(client);
  console.log(
    `${label}, ${calls} calls: client CPU median ${c.p50} ms, p99 ${c.p99} ms` +
      (server ? `; server CPU mean ${(serverTotal / calls).toFixed(2)} ms` : ''),
  );
}

async function main() {
  console.log(
    `load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const tokenCounter = await loadO200kTokenCounter();
  if (backends.includes('pglite')) {
    const client = await PGlite.create();
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    await migrate(db);
    const store = createAgentHistory({ db, tokenCounter }).forTenant(randomUUID());
    const thread = await fill(store);
    await time(`PGlite ${SIZE} messages, loadContext`, () => store.loadContext(thread, { maxTailMessages }));
    await time(`PGlite ${SIZE} messages, listMessages limit 500`, () => store.listMessages(thread, { limit: 500 }));
    await client.close();
  }
  if (backends.includes('postgres')) {
    const server = await startBenchServer({ profile: false, synchronousCommit: null });
    try {
      await server.createDatabase('bench_load_context', { migrated: true });
      const ah = openAgentHistory(server.appUrl('bench_load_context'), 1, false);
      const store = createAgentHistory({
        db: drizzlePostgres({ client: ah.client }) as unknown as AgentHistoryDatabase,
        tokenCounter,
      }).forTenant(ah.tenantId);
      const thread = await fill(store);
      const meter = cpuMeter(await server.postmasterPid());
      // /proc counts the server's CPU in 10 ms ticks: only the mean over many calls means anything.
      const serverMs = async () => (await meter()).serverMs;
      await time(`PG15 ${SIZE} messages, loadContext`, () => store.loadContext(thread, { maxTailMessages }), serverMs);
      await time(
        `PG15 ${SIZE} messages, listMessages limit 500`,
        () => store.listMessages(thread, { limit: 500 }),
        serverMs,
      );
      await ah.client.end();
    } finally {
      server.stop();
    }
  }
}

runMain(main);
