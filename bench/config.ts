// Every knob of `npm run bench` comes from an environment variable, so a run is reproducible from its results JSON.

const env = process.env;
const integer = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
const list = (name: string, fallback: number[]) =>
  env[name] ? env[name]!.split(',').map((item) => Number(item.trim())) : fallback;
const names = (name: string, fallback: string[]) =>
  env[name]
    ? env[name]!.split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : fallback;

export type BenchConfig = ReturnType<typeof loadConfig>;

/** Full sizes by default; `BENCH_QUICK=1` shrinks every workload for a smoke run. */
export function loadConfig() {
  const quick = env.BENCH_QUICK === '1';
  return {
    quick,
    /** Repetitions of the whole suite; min / median / max are taken over them. */
    runs: integer('BENCH_RUNS', 3),
    /** Which workloads to run. */
    workloads: names('BENCH_WORKLOADS', ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']),
    /** Which peers to run in W1-W3 (agent-history always runs). */
    peers: names('BENCH_PEERS', [
      'bare-insert',
      'drizzle-chatbot',
      'mastra-pg',
      'bare-agent-table',
      'agent-history-one-by-one',
    ]),
    w1: {
      threads: integer('BENCH_W1_THREADS', quick ? 8 : 50),
      messages: integer('BENCH_W1_MESSAGES', quick ? 10 : 40),
      concurrency: integer('BENCH_W1_CONCURRENCY', 8),
    },
    w2: { appenders: integer('BENCH_W2_APPENDERS', 32), messages: integer('BENCH_W2_MESSAGES', quick ? 96 : 500) },
    w3: {
      sizes: list('BENCH_W3_SIZES', quick ? [10, 200, 2_000] : [10, 1_000, 10_000, 100_000]),
      /** The largest thread Mastra is seeded with and read whole (its whole-thread read is slow: ~23 s at 10,000). */
      mastraMaxSize: integer('BENCH_W3_MASTRA_MAX', quick ? 2_000 : 10_000),
      /** Messages after the snapshot boundary in the "snapshot + tail" context load. */
      snapshotTail: integer('BENCH_W3_SNAPSHOT_TAIL', 8),
      /** Timed rounds per operation (every size, and first / deep page, interleaved within a round). */
      rounds: integer('BENCH_W3_ROUNDS', quick ? 10 : 30),
      /** Timed rounds of the whole-thread read. */
      wholeRounds: integer('BENCH_W3_WHOLE_ROUNDS', 3),
      /** The largest thread read whole (the whole-thread target is at 10,000; 100,000 whole is slow for every peer). */
      wholeMax: integer('BENCH_W3_WHOLE_MAX', Number.MAX_SAFE_INTEGER),
    },
    w4: { sizes: list('BENCH_W4_SIZES', [50, 600, 2_000]) },
    w5: {
      w1: {
        threads: integer('BENCH_W5_THREADS', quick ? 8 : 50),
        messages: integer('BENCH_W5_MESSAGES', quick ? 10 : 40),
        concurrency: 8,
      },
      sizes: list('BENCH_W5_SIZES', quick ? [10, 200] : [10, 1_000, 10_000]),
      demo: env.BENCH_DEMO !== '0',
    },
    /** W6: characters of each Unicode class for the guarded counter, and for the bare tokenizer beside it. */
    w6: {
      chars: integer('BENCH_W6_CHARS', quick ? 100_000 : 1_000_000),
      bareChars: integer('BENCH_W6_BARE_CHARS', quick ? 4_000 : 16_000),
    },
    /**
     * Refuse to start when the 1-minute load average is above this (other processes share the cores), unless
     * `BENCH_ALLOW_NOISY=1`, which runs anyway and marks the report NOISY.
     */
    maxLoad: Number(env.BENCH_MAX_LOAD ?? 1),
    allowNoisy: env.BENCH_ALLOW_NOISY === '1',
    /** A run during which other processes kept more than this many cores busy (from /proc/stat) is marked noisy. */
    maxForeignCores: Number(env.BENCH_MAX_FOREIGN_CORES ?? 0.25),
    /** W7: timed first calls (initialMessages() plus one prepareStep) on the 600-message thread; a quarter on 2,000. */
    w7: { calls: integer('BENCH_W7_CALLS', quick ? 40 : 200) },
    /** W8: one chat turn end to end, on `chats` chats of each size, one at a time and `chats` at once. */
    w8: {
      sizes: list('BENCH_W8_SIZES', [200, 2_000]),
      chats: integer('BENCH_W8_CHATS', 16),
      turns: integer('BENCH_W8_TURNS', quick ? 8 : 32),
      rounds: integer('BENCH_W8_ROUNDS', quick ? 1 : 3),
      poolSize: integer('BENCH_W8_POOL', 10),
      peers: names('BENCH_W8_PEERS', ['agent-history', 'mastra-pg', 'drizzle-chatbot', 'stream-only']),
    },
    /** Load pg_stat_statements (a little overhead for every peer) and print the top statements per workload. */
    profile: env.BENCH_PROFILE === '1',
    seed: integer('BENCH_MESSAGE_SEED', 42),
    /** Diagnosis only: e.g. `off` (ALTER DATABASE … SET synchronous_commit) to take the WAL flush out of W1 / W2. */
    synchronousCommit: env.BENCH_SYNC_COMMIT && /^[a-z_]+$/.test(env.BENCH_SYNC_COMMIT) ? env.BENCH_SYNC_COMMIT : null,
  };
}
