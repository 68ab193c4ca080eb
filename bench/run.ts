// `npm run bench`: starts its own PostgreSQL 15 cluster and runs, side by side in one process, W1 append,
// W2 hot thread, W3 load, W4 prepareStep (hook), W5 the embedded default, W6 token counting per Unicode class, W7 the context engine's first call and W8 one whole chat turn, BENCH_RUNS times (default 3).
// Prints min / median / max, ratios and PASS / MISS per target; writes bench/results/<run>.json and .md.
// Environment: see bench/config.ts (BENCH_QUICK=1 for a smoke run, BENCH_RUNS, BENCH_WORKLOADS, …).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { loadConfig } from './config.js';
import { cpuMeter, cpuPerOperation } from './cpu.js';
import { MessageFactory } from './messages.js';
import { agentHistoryPeer } from './peers/agent-history-peer.js';
import { bareAgentTablePeer } from './peers/bare-agent-table-peer.js';
import { bareInsertPeer } from './peers/bare-insert-peer.js';
import { FLOOR_PEERS, guardedInsertPeer } from './peers/guarded-insert-peer.js';
import { mastraPeer } from './peers/mastra-peer.js';
import { drizzleChatbotPeer } from './peers/drizzle-chatbot-peer.js';
import type { AppendPeer } from './peers/peer.js';
import { renderReport } from './render-report.js';
import { assertRlsApplies, startBenchServer, type BenchServer } from './server.js';
import { measureDemo } from './workloads/demo-wall-time.js';
import { runPrepareStepHook } from './workloads/prepare-step-hook.js';
import { runW1Append } from './workloads/w1-append.js';
import { runW2HotThread } from './workloads/w2-hot-thread.js';
import {
  loadTemplates,
  measureAgentHistoryThreads,
  seedAgentHistoryThreads,
  type SeededThread,
} from './workloads/w3-agent-history.js';
import { closeW3, measureW3, prepareW3, type W3State } from './workloads/w3-load.js';
import { runTokenClasses } from './workloads/w6-token-classes.js';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import {
  embeddedAgentHistoryPeer,
  embeddedBarePeer,
  embeddedGuardedPeer,
  embeddedMeter,
  openEmbedded,
  type Embedded,
} from './workloads/w5-embedded.js';
import { runFirstCall } from './workloads/w7-first-call.js';
import { runW8 } from './workloads/w8-chat-turn.js';
import { runMain } from './run-main.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const config = loadConfig();
const factory = new MessageFactory({ seed: config.seed });
const log = (...parts: unknown[]) => console.log(...parts);
const dbName = (...parts: string[]) => `bench_${parts.join('_')}`.replace(/[^a-z0-9_]/g, '_');
const rotate = <T>(items: T[], by: number) => items.map((_, index) => items[(index + by) % items.length]!);

async function topStatements(server: BenchServer, database: string) {
  const sql = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
  try {
    const rows =
      await sql`select calls::int, round(mean_exec_time::numeric, 3)::float as "meanMs", round(total_exec_time::numeric, 1)::float as "totalMs", plans::int, round(mean_plan_time::numeric, 3)::float as "meanPlanMs",
        round((shared_blks_hit + shared_blks_read)::numeric / greatest(calls, 1), 1)::float as "blocksPerCall", left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
      from pg_stat_statements where dbid = (select oid from pg_database where datname = ${database})
      order by total_exec_time desc limit 8`;
    await sql`select pg_stat_statements_reset()`;
    return rows;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function openAppendPeer(
  server: BenchServer,
  peer: string,
  database: string,
  poolSize: number,
): Promise<AppendPeer> {
  const urls = { appUrl: server.appUrl(database), adminUrl: server.adminUrl(database), poolSize };
  if (peer === 'agent-history') return agentHistoryPeer(urls);
  // The same store with write combining off: every append its own statement and commit.
  if (peer === 'agent-history-one-by-one') return agentHistoryPeer({ ...urls, name: peer, appendBatching: false });
  // The same store with `search: 'background'`: the drain after the appends is in its CPU and WAL.
  if (peer === 'agent-history-background') return agentHistoryPeer({ ...urls, name: peer, search: 'background' });
  // The same store with `maxInFlight` append statements at once instead of its default.
  const inFlight = /^agent-history-in-flight-(\d+)$/.exec(peer);
  if (inFlight) return agentHistoryPeer({ ...urls, name: peer, appendBatching: { maxInFlight: Number(inFlight[1]) } });
  if (peer === 'bare-insert') return bareInsertPeer(urls);
  if (peer === 'bare-agent-table') return bareAgentTablePeer(urls);
  if (peer === 'guarded-insert') return guardedInsertPeer(urls);
  if (peer === 'guarded-insert-search') return guardedInsertPeer({ ...urls, search: true });
  // The combining floor, with 2 statements in flight or with the number its name ends with.
  const batch = /^guarded-batch-search(?:-(\d+))?$/.exec(peer);
  if (batch) return guardedInsertPeer({ ...urls, search: true, combine: true, inFlight: Number(batch[1] ?? 2) });
  if (peer === 'mastra-pg') return mastraPeer(urls);
  if (peer === 'drizzle-chatbot') return drizzleChatbotPeer(urls);
  throw new Error(`unknown peer ${peer}`);
}

async function appendWorkload(server: BenchServer, workload: 'w1' | 'w2', runIndex: number) {
  const results: Record<string, unknown> = {};
  for (const name of rotate(['agent-history', ...config.peers], runIndex)) {
    const database = dbName(workload, name);
    await server.createDatabase(database, {
      migrated: name.startsWith('agent-history') || name === 'bare-agent-table',
    });
    const poolSize = workload === 'w1' ? config.w1.concurrency : config.w2.appenders;
    let peer: AppendPeer | undefined;
    let result: Record<string, unknown>;
    try {
      peer = await openAppendPeer(server, name, database, poolSize);
      const meter = cpuMeter(await server.postmasterPid(), () => server.walBytes());
      if (workload === 'w1') result = await runW1Append(peer, factory, config.w1, meter);
      else {
        const checkSequences =
          'checkSequences' in peer ? (peer as ReturnType<typeof agentHistoryPeer>).checkSequences : undefined;
        const w2 = await runW2HotThread(peer, factory, config.w2, meter, checkSequences);
        result = w2;
        const check = w2.sequences;
        if (check !== undefined) {
          const n = w2.appends;
          const ok =
            check.rows === n &&
            check.distinctSequences === n &&
            check.minSequence === 1 &&
            check.maxSequence === n &&
            check.nextSequence === n &&
            check.commitOrderInversions === 0 &&
            check.tiesAcrossTransactions === 0;
          result = { ...w2, sequences: { ...check, ok } };
        }
      }
      if (config.profile) result.topStatements = await topStatements(server, database);
    } catch (error) {
      result = {
        error: String((error as Error)?.stack ?? error)
          .split('\n')
          .slice(0, 6)
          .join('\n'),
      };
    } finally {
      await peer?.close().catch(() => {});
      await server.dropDatabase(database);
    }
    results[name] = result;
    const {
      appendsPerSecond,
      latencyMs,
      verify,
      error,
      cpuMsPerAppend: cpu,
    } = result as {
      appendsPerSecond?: number;
      latencyMs?: { p50: number; p99: number };
      verify?: { ok: boolean };
      error?: string;
      cpuMsPerAppend?: { clientMs: number; serverMs: number };
    };
    log(
      `  ${workload} ${name.padEnd(14)} ${error ? `ERROR ${error.split('\n')[0]}` : `${appendsPerSecond} appends/s  p50 ${latencyMs?.p50} ms  p99 ${latencyMs?.p99} ms  cpu/append client ${cpu?.clientMs} ms server ${cpu?.serverMs} ms  verified ${verify?.ok}`}`,
    );
  }
  return results;
}

async function runEmbedded(
  state: { embedded?: Embedded; threads?: SeededThread[]; store?: ReturnType<Embedded['tenant']> },
  runIndex: number,
) {
  const result: Record<string, unknown> = {};
  if (!state.embedded) {
    state.embedded = await openEmbedded();
    result.open = { createMs: Math.round(state.embedded.createMs), migrateMs: Math.round(state.embedded.migrateMs) };
  }
  const embedded = state.embedded;
  const w1: Record<string, unknown> = {};
  const names = ['agent-history', 'bare-insert', ...FLOOR_PEERS.filter((floor) => config.peers.includes(floor))];
  for (const name of rotate(names, runIndex)) {
    const peer =
      name === 'agent-history'
        ? embeddedAgentHistoryPeer(embedded)
        : name === 'bare-insert'
          ? embeddedBarePeer(embedded)
          : await embeddedGuardedPeer(embedded, {
              search: name.endsWith('-search'),
              combine: name.startsWith('guarded-batch'),
            });
    w1[name] = await runW1Append(peer, factory, config.w5.w1, embeddedMeter(embedded));
    log(`  w5 pglite w1 ${name.padEnd(14)} ${(w1[name] as { appendsPerSecond: number }).appendsPerSecond} appends/s`);
  }
  result.w1 = w1;
  if (!state.threads) {
    state.store = embedded.tenant();
    await loadTemplates(embedded.admin, factory);
    state.threads = await seedAgentHistoryThreads({
      store: state.store,
      admin: embedded.admin,
      sizes: config.w5.sizes,
      snapshotTail: config.w3.snapshotTail,
    });
  }
  result.w3 = await measureAgentHistoryThreads({
    store: state.store!,
    admin: embedded.admin,
    threads: state.threads,
    rounds: config.w3.rounds,
    wholeRounds: config.w3.wholeRounds,
  });
  if (config.w5.demo) {
    result.demo = await measureDemo(ROOT);
    log(`  w5 demo ${JSON.stringify(result.demo).slice(0, 200)}`);
  }
  return result;
}

function versions() {
  const read = (name: string) => {
    try {
      return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version as string;
    } catch {
      return undefined;
    }
  };
  return Object.fromEntries(
    ['@mastra/core', '@mastra/pg', 'drizzle-orm', 'postgres', '@electric-sql/pglite', 'gpt-tokenizer'].map((name) => [
      name,
      read(name),
    ]),
  );
}

async function main() {
  const startedAt = new Date();
  const runId = startedAt.toISOString().replace(/[:.]/g, '-');
  const outDir = join(BENCH_DIR, 'results');
  mkdirSync(outDir, { recursive: true });
  log(
    `agent-history bench ${runId}: ${config.runs} run(s), workloads ${config.workloads.join(',')}, peers agent-history,${config.peers.join(',')}${config.workloads.includes('w8') ? ` (W8: ${config.w8.peers.join(',')})` : ''}${config.quick ? ' (QUICK)' : ''}`,
  );
  const loadAtStart = os.loadavg()[0]!;
  const noisyAtStart = loadAtStart > config.maxLoad;
  if (noisyAtStart && !config.allowNoisy) {
    console.error(
      `refusing to benchmark: the 1-minute load average is ${loadAtStart.toFixed(2)} (> BENCH_MAX_LOAD ${config.maxLoad}): ` +
        'other processes share the cores and would skew every ratio. Wait for a quiet machine, or set BENCH_ALLOW_NOISY=1 ' +
        'to run anyway (the report is then marked NOISY; the CPU and WAL per operation stay comparable).',
    );
    process.exit(2);
  }
  const server = await startBenchServer({ profile: config.profile, synchronousCommit: config.synchronousCommit });
  const stop = () => {
    server.stop();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let w3: W3State | undefined;
  const embedded: Parameters<typeof runEmbedded>[0] = {};
  try {
    await server.createDatabase('bench_rls_check', { migrated: true });
    const rls = await assertRlsApplies(server.appUrl('bench_rls_check'));
    await server.dropDatabase('bench_rls_check');
    const meta = {
      runId,
      command: process.env.npm_lifecycle_script
        ? `npm run bench (${process.env.npm_lifecycle_script})`
        : process.argv.join(' '),
      node: process.version,
      host: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        memGB: Math.round(os.totalmem() / 2 ** 30),
        loadAverageAtStart: os.loadavg().map((value) => Math.round(value * 100) / 100),
      },
      server: await server.info(),
      rls,
      noisyAtStart,
      config,
      messages: factory.stats(),
      versions: versions(),
    };
    log(`  server: ${meta.server.version}; ${JSON.stringify(meta.server.settings)}`);
    log(`  app login: ${JSON.stringify(rls)}`);
    const runs: Record<string, unknown>[] = [];
    const results = { meta, runs };
    const save = () => {
      writeFileSync(join(outDir, `${runId}.json`), JSON.stringify(results, null, 1));
      writeFileSync(join(outDir, 'latest.json'), JSON.stringify(results, null, 1));
    };
    for (let index = 0; index < config.runs; index++) {
      const run: Record<string, unknown> = { run: index + 1, startedAt: new Date().toISOString() };
      runs.push(run);
      const runStart = performance.now();
      const runMeter = cpuMeter(await server.postmasterPid());
      const runBefore = await runMeter();
      log(`\nrun ${index + 1}/${config.runs}`);
      if (config.workloads.includes('w1')) run.w1 = await appendWorkload(server, 'w1', index);
      if (config.workloads.includes('w2')) run.w2 = await appendWorkload(server, 'w2', index);
      if (config.workloads.includes('w3')) {
        w3 ??= await prepareW3({ server, factory, config, log });
        run.w3 = await measureW3(w3, { config, log });
        if (index === 0)
          run.w3Seeding = {
            seedMs: Math.round(w3.seedMs),
            agentHistory: w3.ahThreads.map(({ size, seedMs }) => ({ size, seedMs: Math.round(seedMs) })),
          };
      }
      if (config.workloads.includes('w4')) {
        run.w4 = await runPrepareStepHook(BENCH_DIR, config.w4.sizes);
        log(`  w4 ${JSON.stringify(run.w4).slice(0, 200)}`);
      }
      if (config.workloads.includes('w5')) run.w5 = await runEmbedded(embedded, index);
      if (config.workloads.includes('w6')) {
        run.w6 = runTokenClasses({ ...config.w6, seed: index, counter: await loadO200kTokenCounter() });
        log(`  w6 ${JSON.stringify(run.w6).slice(0, 200)}`);
      }
      if (config.workloads.includes('w7')) {
        run.w7 = await runFirstCall(config.w7);
        log(`  w7 ${JSON.stringify(run.w7).slice(0, 200)}`);
      }
      if (config.workloads.includes('w8'))
        run.w8 = await runW8({ server, factory, config: config.w8, runIndex: index, log });
      run.wallMs = Math.round(performance.now() - runStart);
      // What other processes took meanwhile: the machine's busy time minus this process and the cluster.
      run.foreignCores = cpuPerOperation(runBefore, await runMeter(), 1).foreignCores;
      run.noisy = noisyAtStart || (run.foreignCores as number) > config.maxForeignCores;
      log(`  run ${index + 1}: other processes kept ${run.foreignCores} cores busy${run.noisy ? ' — NOISY' : ''}`);
      run.loadAverageAtEnd = os.loadavg().map((value) => Math.round(value * 100) / 100);
      save();
    }
    const report = renderReport(results, config);
    writeFileSync(join(outDir, `${runId}.md`), report + '\n');
    save();
    log('\n' + report);
    log(`wrote bench/results/${runId}.json and .md`);
  } finally {
    if (w3) await closeW3(w3);
    await embedded.embedded?.close().catch(() => {});
    server.stop();
  }
}

runMain(main);
