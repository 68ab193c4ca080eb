// The scale note of BENCHMARKS.md: what an append and a read cost when the tables hold 1M (and, with
// BENCH_SCALE_SIZES=1000000,10000000, 10M) messages across 10,000 tenants. The data is generated with SQL
// (bench/scale-generate.ts: INSERT … SELECT over the bench's 256 message templates, with the byte sizes, token
// counts and search vectors the store writes, indexes rebuilt after the load), not through the API, and checked
// (bench/scale-check.ts) before anything is measured; then, as the application login through the store: appends to
// random existing threads (8 in flight) right after the CHECKPOINT and again after a warm-up, with CPU, WAL and
// full-page-image WAL per append, and newest-50 pages and context loads of random threads. Prints the table and
// index sizes and the load average. Drops its database and stops its cluster when done, failed or interrupted.
// `npx tsx bench/scale.ts` (about 5 minutes for 1M on a quiet machine).
import { randomInt } from 'node:crypto';
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { storedTokenCountId } from '../src/tokens/count-stored-message-tokens.js';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import { cpuMeter, cpuPerOperation } from './cpu.js';
import { MessageFactory } from './messages.js';
import { openAgentHistory } from './peers/agent-history-peer.js';
import { checkScaleData } from './scale-check.js';
import { addTemplateVectors, catalogSnapshot, generateMessages, loadSessions } from './scale-generate.js';
import { startBenchServer, type BenchServer } from './server.js';
import { summarize } from './stats.js';
import { loadTemplates, type AdminQuery } from './workloads/w3-agent-history.js';

const env = process.env;
const sizes = (env.BENCH_SCALE_SIZES ?? '1000000').split(',').map(Number);
const tenants = Number(env.BENCH_SCALE_TENANTS ?? 10_000);
const threadsPerTenant = Number(env.BENCH_SCALE_THREADS_PER_TENANT ?? 5);
const operations = Number(env.BENCH_SCALE_OPERATIONS ?? 1_000);
const warmup = Number(env.BENCH_SCALE_WARMUP ?? 5_000);
const DATABASE = 'bench_scale';
const log = (...parts: unknown[]) => console.log(...parts);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

type Thread = { tenant_id: string; id: string };
type History = ReturnType<typeof openAgentHistory>['history'];

async function main(server: BenchServer) {
  const factory = new MessageFactory({ seed: 42 });
  const counterId = storedTokenCountId(await loadO200kTokenCounter());
  await server.createDatabase(DATABASE, { migrated: true });
  const sessions = loadSessions(server.adminUrl(DATABASE), 2);
  const sql = sessions[0]!;
  const app = openAgentHistory(server.appUrl(DATABASE), 8);
  try {
    await sql.unsafe('create extension if not exists pg_walinspect');
    const migrated = await catalogSnapshot(sql);
    await loadTemplates(((text, params) => sql.unsafe(text, params as never[])) as AdminQuery, factory);
    await addTemplateVectors(sql);
    await sql.unsafe(`insert into agent_thread (tenant_id, id, title, next_sequence)
      select ('00000000-0000-4000-8000-' || lpad(to_hex(t), 12, '0'))::uuid, gen_random_uuid(), 'scale', 0
      from generate_series(1, ${tenants}) t, generate_series(1, ${threadsPerTenant}) k`);
    const threads = await sql<Thread[]>`select tenant_id, id from agent_thread where title = 'scale'`;
    let loaded = 0;
    for (const size of sizes) {
      const perThread = Math.ceil((size - loaded) / threads.length);
      log(`\n## to ${size.toLocaleString('en-US')} messages: +${perThread} per thread; load average ${load()}`);
      const seconds = await generateMessages(sessions, { perThread, threads: threads.length, counterId, migrated });
      const messages = await checkScaleData(sql, app.history, {
        threads,
        tokenCounter: await loadO200kTokenCounter(),
        factory,
      });
      loaded = messages;
      await server.checkpoint();
      log(
        `${messages.toLocaleString('en-US')} messages (${tenants} tenants × ${threadsPerTenant} threads), generated in ${seconds.toFixed(0)} s, checked; load average ${load()}`,
      );
      await printSizes(sql);
      await measure(server, sql, app.history, threads, factory);
    }
  } finally {
    await app.client.end({ timeout: 5 });
    await Promise.all(sessions.map((session) => session.end({ timeout: 5 })));
  }
}

async function printSizes(sql: postgres.Sql) {
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
  const [{ total }] = await sql<{ total: string }[]>`select pg_database_size(current_database())::text as total`;
  log(`database: ${(Number(total) / 2 ** 30).toFixed(2)} GB`);
}

/** Full-page-image bytes and records in the WAL between two LSNs (pg_walinspect), or null if unavailable. */
async function fullPageImages(sql: postgres.Sql, from: string, to: string) {
  try {
    const [row] = await sql<{ bytes: string; images: string }[]>`select coalesce(sum(fpi_length), 0)::text as bytes,
      count(*) filter (where fpi_length > 0)::text as images
      from pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)`;
    return { bytes: Number(row!.bytes), images: Number(row!.images) };
  } catch (error) {
    log(`(no full-page-image figure: ${(error as Error).message})`);
    return null;
  }
}

async function appends(
  server: BenchServer,
  sql: postgres.Sql,
  history: History,
  threads: Thread[],
  factory: MessageFactory,
  count: number,
  label: string,
) {
  const meter = cpuMeter(await server.postmasterPid(), () => server.walBytes());
  const lsn = async () => (await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0]!.lsn;
  const latencies: number[] = [];
  let next = 0;
  const [before, from, loadBefore] = [await meter(), await lsn(), load()];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < count; index = next++) {
        const thread = threads[randomInt(threads.length)]!;
        const started = performance.now();
        await history.forTenant(thread.tenant_id).appendMessage(thread.id, factory.make(index));
        latencies.push(performance.now() - started);
      }
    }),
  );
  const cost = cpuPerOperation(before, await meter(), count);
  const images = await fullPageImages(sql, from, await lsn());
  const { p50, p99 } = summarize(latencies);
  log(
    `${label} (${count}, 8 in flight, random threads): p50 ${p50} ms, p99 ${p99} ms; CPU client ${cost.clientMs} + server ${cost.serverMs} ms; WAL ${cost.walBytes} B per append` +
      (images
        ? `, of which full-page images ${Math.round(images.bytes / count)} B (${(images.images / count).toFixed(2)} records with images per append)`
        : '') +
      `; load average ${loadBefore} → ${load()}, foreign cores ${cost.foreignCores}`,
  );
}

async function measure(
  server: BenchServer,
  sql: postgres.Sql,
  history: History,
  threads: Thread[],
  factory: MessageFactory,
) {
  await appends(server, sql, history, threads, factory, operations, 'append right after the checkpoint');
  if (warmup > 0) {
    await appends(server, sql, history, threads, factory, warmup, 'warm-up appends');
    await appends(server, sql, history, threads, factory, operations, 'append after the warm-up');
  }
  const pick = () => threads[randomInt(threads.length)]!;
  const meter = cpuMeter(await server.postmasterPid(), () => server.walBytes());
  for (const [label, read] of [
    ['newest-50 page', (thread: Thread) => history.forTenant(thread.tenant_id).listMessages(thread.id)],
    ['context load', (thread: Thread) => history.forTenant(thread.tenant_id).loadContext(thread.id)],
  ] as const) {
    const times: number[] = [];
    const [start, loadBefore] = [await meter(), load()];
    for (let index = 0; index < operations; index++) {
      const started = performance.now();
      await read(pick());
      times.push(performance.now() - started);
    }
    const cost = cpuPerOperation(start, await meter(), operations);
    const { p50, p99 } = summarize(times);
    log(
      `${label} (${operations}, one at a time, random threads): p50 ${p50} ms, p99 ${p99} ms; CPU client ${cost.clientMs} + server ${cost.serverMs} ms; load average ${loadBefore} → ${load()}, foreign cores ${cost.foreignCores}`,
    );
  }
}

/** Runs {@link main}, then drops the (large) database and stops the cluster, also on SIGINT / SIGTERM. */
async function run() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    await server.dropDatabase(DATABASE).catch((error: unknown) => console.error('drop failed', error));
    server.stop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  try {
    await main(server);
  } finally {
    await cleanUp();
  }
}

run().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
