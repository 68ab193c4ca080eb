// W8, one whole chat turn: on chats of each size, what one useChat exchange costs each peer, from the request to
// the answer stored. Per peer a fresh database and `chats` chats of each size, vacuumed; one untimed turn on every
// chat (for agent-history the first compaction of a chat over the window: a summary and a snapshot); then `turns`
// turns one at a time (round-robin over the chats) and `rounds` rounds of `chats` turns at once. Per turn: client and
// server CPU, WAL bytes and statements sent on the wire (over the whole phase, divided by its turns), wall time
// (p50, p99). One more turn, one at a time, lists every statement it sent (`trace`).
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { cpuMeter, cpuPerOperation } from '../cpu.js';
import type { MessageFactory } from '../messages.js';
import type { BenchServer } from '../server.js';
import { round, summarize } from '../stats.js';
import { loadTemplates } from './w3-agent-history.js';
import { agentHistoryW8 } from './w8-agent-history.js';
import { firstCallMessages } from './w8-chat-model.js';
import type { W8Peer } from './w8-peer.js';
import { chatbotW8, mastraW8, streamOnlyW8, windowFloorW8 } from './w8-peers.js';
import { countNodePostgres, statementCounter, type StatementCounter } from './w8-statements.js';

export interface W8Config {
  sizes: number[];
  /** Chats of each size: the concurrency of the concurrent phase. */
  chats: number;
  /** Turns timed one at a time, per size. */
  turns: number;
  /** Rounds of `chats` concurrent turns, per size. */
  rounds: number;
  /** Every peer's pool size (the Next.js example's is 10). */
  poolSize: number;
  peers: string[];
}

async function openPeer(
  name: string,
  server: BenchServer,
  database: string,
  admin: postgres.Sql,
  options: {
    config: W8Config;
    factory: MessageFactory;
    counter: StatementCounter;
  },
): Promise<W8Peer> {
  const { config, factory, counter } = options;
  const urls = { adminUrl: server.adminUrl(database), poolSize: config.poolSize, counter, factory };
  if (name === 'agent-history') {
    await loadTemplates((text, params) => admin.unsafe(text, params as never[]), factory);
    return agentHistoryW8({ appUrl: server.appUrl(database), admin, poolSize: config.poolSize, counter });
  }
  if (name === 'mastra-pg') {
    countNodePostgres(counter);
    return mastraW8(urls);
  }
  if (name === 'drizzle-chatbot') return chatbotW8(urls);
  if (name === 'stream-only') return streamOnlyW8();
  if (name === 'window-floor') return windowFloorW8(urls);
  throw new Error(`unknown W8 peer ${name}`);
}

/** Runs `turn` on `chatIds`: one at a time (`concurrency` 1) or all at once per round. */
async function phase(
  chatIds: string[],
  turn: (chatId: string) => Promise<void>,
  { turns, concurrency }: { turns: number; concurrency: number },
  measure: () => Promise<{
    sample: Awaited<ReturnType<ReturnType<typeof cpuMeter>>>;
    statements: number;
    checkpointStatements: number;
  }>,
) {
  firstCallMessages.length = 0;
  const before = await measure();
  const wall: number[] = [];
  const timed = async (chatId: string) => {
    const started = performance.now();
    await turn(chatId);
    wall.push(performance.now() - started);
  };
  for (let done = 0; done < turns; done += concurrency) {
    if (concurrency === 1) await timed(chatIds[done % chatIds.length]!);
    else await Promise.all(chatIds.slice(0, concurrency).map(timed));
  }
  const after = await measure();
  const cpu = cpuPerOperation(before.sample, after.sample, wall.length);
  const ms = summarize(wall);
  return {
    turns: wall.length,
    concurrency,
    turnMs: { p50: round(ms.p50), p99: round(ms.p99) },
    turnsPerSecond: round((wall.length * 1000) / (after.sample.wallMs - before.sample.wallMs), 1),
    cpuMsPerTurn: { clientMs: cpu.clientMs, serverMs: cpu.serverMs, totalMs: cpu.totalMs },
    walBytesPerTurn: cpu.walBytes,
    statementsPerTurn: round((after.statements - before.statements) / wall.length, 2),
    /** Of those, sent by the streaming checkpoints (exact one turn at a time; turns overlap at once). */
    checkpointStatementsPerTurn: round((after.checkpointStatements - before.checkpointStatements) / wall.length, 2),
    foreignCores: cpu.foreignCores,
    /** The fewest messages (system left out) a turn of the phase sent the model in its first call. */
    fewestModelMessages: Math.min(...firstCallMessages),
  };
}

async function measureSize(peer: W8Peer, size: number, context: SizeContext) {
  const { config, counter, admin, log } = context;
  const chatIds: string[] = [];
  for (let index = 0; index < config.chats; index++) chatIds.push(await peer.seed(size));
  // Vacuumed and analyzed now, so autovacuum does not visit the freshly seeded tables (and write WAL) mid-measurement.
  await admin.unsafe('vacuum analyze');
  await Promise.all(chatIds.map((chatId) => peer.turn(chatId)));
  counter.trace = [];
  await peer.turn(chatIds[0]!);
  const trace = counter.trace;
  counter.trace = null;
  const meter = cpuMeter(context.postmasterPid, context.walBytes);
  const measure = async () => ({
    sample: await meter(),
    statements: counter.count,
    checkpointStatements: counter.checkpointCount,
  });
  const derived = async () =>
    peer.name === 'agent-history'
      ? (
          await admin<{ snapshots: number; summaries: number }[]>`select
          (select count(*)::int from agent_context_snapshot) as snapshots, (select count(*)::int from agent_summary) as summaries`
        )[0]!
      : { snapshots: 0, summaries: 0 };
  const derivedBefore = await derived();
  const one = await phase(chatIds, peer.turn, { turns: config.turns, concurrency: 1 }, measure);
  const many = await phase(
    chatIds,
    peer.turn,
    { turns: config.rounds * config.chats, concurrency: config.chats },
    measure,
  );
  const derivedAfter = await derived();
  const turns = one.turns + many.turns;
  const result = {
    size,
    one,
    many,
    /** Snapshots and summaries the chats hold after their first turn (agent-history only). */
    afterFirstTurn: derivedBefore,
    snapshotsPerTurn: round((derivedAfter.snapshots - derivedBefore.snapshots) / turns, 2),
    summariesPerTurn: round((derivedAfter.summaries - derivedBefore.summaries) / turns, 2),
    trace,
  };
  log(
    `  w8 ${peer.name.padEnd(15)} ${String(size).padStart(5)} msgs: 1 chat ${one.turnMs.p50} ms/turn, ${config.chats} chats ${many.turnMs.p50} ms/turn (${many.turnsPerSecond}/s); ` +
      `cpu/turn ${one.cpuMsPerTurn.clientMs} + ${one.cpuMsPerTurn.serverMs} ms; ${one.statementsPerTurn} statements; WAL ${one.walBytesPerTurn} B`,
  );
  return result;
}

interface SizeContext {
  config: W8Config;
  counter: StatementCounter;
  admin: postgres.Sql;
  postmasterPid: number | null;
  walBytes: () => Promise<number>;
  log: (...parts: unknown[]) => void;
}

/** W8 for every peer of `config.peers` (in rotating order by `runIndex`), each on a database of its own. */
export async function runW8({
  server,
  factory,
  config,
  runIndex = 0,
  log = console.log,
}: {
  server: BenchServer;
  factory: MessageFactory;
  config: W8Config;
  runIndex?: number;
  log?: (...parts: unknown[]) => void;
}): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  const names = config.peers.map((_, index) => config.peers[(index + runIndex) % config.peers.length]!);
  for (const name of names) {
    const database = `bench_w8_${name.replace(/[^a-z0-9]/g, '_')}`;
    await server.createDatabase(database, { migrated: name === 'agent-history' });
    const admin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
    const counter = statementCounter();
    let peer: W8Peer | undefined;
    try {
      peer = await openPeer(name, server, database, admin, { config, factory, counter });
      const context = {
        config,
        counter,
        admin,
        postmasterPid: await server.postmasterPid(),
        walBytes: server.walBytes,
        log,
      };
      const sizes = [];
      for (const size of config.sizes) sizes.push(await measureSize(peer, size, context));
      results[name] = { sizes };
    } catch (error) {
      results[name] = {
        error: String((error as Error)?.stack ?? error)
          .split('\n')
          .slice(0, 6)
          .join('\n'),
      };
      log(`  w8 ${name} ERROR ${String(error)}`);
    } finally {
      countNodePostgres(null);
      await peer?.close().catch(() => {});
      await admin.end({ timeout: 5 });
      await server.dropDatabase(database);
    }
  }
  return results;
}
