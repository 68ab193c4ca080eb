// The scale note of BENCHMARKS.md: what an append and a read cost when the tables hold 1M (and, with
// BENCH_SCALE_SIZES=1000000,10000000, 10M) messages across 10,000 tenants. The data is generated with SQL (one
// INSERT … SELECT from generate_series over the bench's 256 message templates, with the byte sizes and token counts
// the store writes), not through the API; then, as the application login through the store: appends to random
// existing threads (8 in flight) with CPU and WAL per append, and newest-50 pages and context loads of random
// threads. Prints the table and index sizes. `npx tsx bench/scale.ts` (about 10 minutes for 1M on a quiet machine).
import { randomInt } from 'node:crypto';
import postgres from 'postgres';
import { cpuMeter, cpuPerOperation } from './cpu.js';
import { MessageFactory } from './messages.js';
import { openAgentHistory } from './peers/agent-history-peer.js';
import { startBenchServer } from './server.js';
import { summarize } from './stats.js';
import { loadTemplates, type AdminQuery } from './workloads/w3-agent-history.js';

const env = process.env;
const sizes = (env.BENCH_SCALE_SIZES ?? '1000000').split(',').map(Number);
const tenants = Number(env.BENCH_SCALE_TENANTS ?? 10_000);
const threadsPerTenant = Number(env.BENCH_SCALE_THREADS_PER_TENANT ?? 5);
const operations = Number(env.BENCH_SCALE_OPERATIONS ?? 1_000);
const log = (...parts: unknown[]) => console.log(...parts);

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  const factory = new MessageFactory({ seed: 42 });
  try {
    const database = 'bench_scale';
    await server.createDatabase(database, { migrated: true });
    const sql = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
    const admin: AdminQuery = (text, params) => sql.unsafe(text, params as never[]) as never;
    await loadTemplates(admin, factory);
    await sql.unsafe(`insert into agent_thread (tenant_id, id, title, next_sequence)
      select ('00000000-0000-4000-8000-' || lpad(to_hex(t), 12, '0'))::uuid, gen_random_uuid(), 'scale', 0
      from generate_series(1, ${tenants}) t, generate_series(1, ${threadsPerTenant}) k`);
    const threads = await sql<{ tenant_id: string; id: string }[]>`select tenant_id, id from agent_thread`;
    let loaded = 0;
    for (const size of sizes) {
      const perThread = Math.ceil((size - loaded) / threads.length);
      const started = performance.now();
      await sql.unsafe(`insert into agent_message (tenant_id, thread_id, sequence, message_id, role, status, parts, metadata,
          byte_size, token_count, token_counter_id, completed_at)
        select th.tenant_id, th.id, th.next_sequence + q, 'scale-' || th.id || '-' || (th.next_sequence + q), t.role,
          'completed', t.parts, '{}'::jsonb, t.byte_size, t.token_count, 'o200k_base', now()
        from agent_thread th cross join generate_series(1, ${perThread}) q
        join bench_template t on t.idx = (hashtext(th.id::text) + q) & 255`);
      await sql.unsafe(`update agent_thread set next_sequence = next_sequence + ${perThread}`);
      await sql.unsafe('vacuum analyze');
      await server.checkpoint();
      loaded += perThread * threads.length;
      log(
        `\n## ${loaded.toLocaleString('en-US')} messages (${tenants} tenants × ${threadsPerTenant} threads × ${loaded / threads.length} messages), generated in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
      const relations = await sql<{ name: string; kind: string; bytes: string }[]>`
        select c.relname as name, c.relkind as kind, pg_relation_size(c.oid)::text as bytes from pg_class c
        join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relname like 'agent_%' and c.relkind in ('r', 'i', 't')
          or c.oid in (select reltoastrelid from pg_class where relname = 'agent_message')
        order by pg_relation_size(c.oid) desc`;
      log('| relation | kind | size |\n| --- | --- | --- |');
      for (const relation of relations.filter((row) => Number(row.bytes) > 1e6))
        log(
          `| ${relation.name} | ${relation.kind === 'i' ? 'index' : relation.kind === 't' ? 'TOAST' : 'table'} | ${(Number(relation.bytes) / 2 ** 20).toFixed(0)} MB |`,
        );
      await measure(server, database, threads, factory);
    }
    await sql.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

async function measure(
  server: Awaited<ReturnType<typeof startBenchServer>>,
  database: string,
  threads: { tenant_id: string; id: string }[],
  factory: MessageFactory,
) {
  const { client, history } = openAgentHistory(server.appUrl(database), 8);
  const pick = () => threads[randomInt(threads.length)]!;
  const meter = cpuMeter(await server.postmasterPid(), () => server.walBytes());
  const latencies: number[] = [];
  let next = 0;
  const before = await meter();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < operations; index = next++) {
        const thread = pick();
        const started = performance.now();
        await history.forTenant(thread.tenant_id).appendMessage(thread.id, factory.make(index));
        latencies.push(performance.now() - started);
      }
    }),
  );
  const cost = cpuPerOperation(before, await meter(), operations);
  log(
    `\nappend (8 in flight, random threads): p50 ${summarize(latencies).p50} ms; CPU client ${cost.clientMs} + server ${cost.serverMs} ms; WAL ${cost.walBytes} B per append`,
  );
  for (const [label, read] of [
    [
      'newest-50 page',
      (thread: { tenant_id: string; id: string }) => history.forTenant(thread.tenant_id).listMessages(thread.id),
    ],
    [
      'context load',
      (thread: { tenant_id: string; id: string }) => history.forTenant(thread.tenant_id).loadContext(thread.id),
    ],
  ] as const) {
    const times: number[] = [];
    const start = await meter();
    for (let index = 0; index < operations; index++) {
      const started = performance.now();
      await read(pick());
      times.push(performance.now() - started);
    }
    const readCost = cpuPerOperation(start, await meter(), operations);
    log(
      `${label} (one at a time, random threads, cold and warm mixed): p50 ${summarize(times).p50} ms, p99 ${summarize(times).p99} ms; CPU client ${readCost.clientMs} + server ${readCost.serverMs} ms`,
    );
  }
  await client.end({ timeout: 5 });
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
