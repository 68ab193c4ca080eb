// W7: the first call of a request: `initialMessages()` plus one `prepareStep`, by a new context manager (one per
// request, as an app makes), on a long thread whose messages carry stored token counts (and per-part counts).
// Every call gets fresh message objects, as a store's load parses them from rows: they are copied before the
// clock starts, so the figure is the engine's own time (the database read is W3). Snapshots are accepted and not
// kept, so every call starts from the same thread without one (the worst case: the whole thread is compacted).
// The store's message cache (the Postgres store's `contextCache`) is measured warm from the same thread, warm from
// the thread's previous request (the newest turn is new to it), and absent (a cold process): `FirstCallCache`.
//
//   npx tsx bench/workloads/w7-first-call.ts                       # 600 messages (~250k tokens) and 2,000
//   BENCH_W7_CALLS=400 npx tsx bench/workloads/w7-first-call.ts
//   npx tsx --cpu-prof --cpu-prof-dir=bench/results/profiles bench/workloads/w7-first-call.ts   # where the time goes
import { pathToFileURL } from 'node:url';
import type { ModelMessage } from 'ai';
import { createContextManager } from '../../src/ai-sdk/context-manager/create-context-manager.js';
import { countStoredMessageTokens, countStoredPartTokens, storedTokenCountId } from '../../src/context/index.js';
import { loadO200kTokenCounter, type TokenCounter } from '../../src/tokens/token-counter.js';
import type {
  ContextMessage,
  ContextMessageCache,
  ContextSnapshot,
  ContextStore,
  LoadedContext,
} from '../../src/model/context-store.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';
import { createContextMessageCache } from '../../src/tokens/context-message-cache.js';
import { summarize, type Summary } from '../stats.js';
import { measureNextRequest } from './w7-next-request.js';

/** One measured thread. */
export interface FirstCallResult {
  /** Stored messages in the thread. */
  messages: number;
  /** Whether the rows carried per-part counts (`partTokenCounts`) besides the message's count. */
  partCounts: boolean;
  /**
   * Whether the store offered a message cache that earlier requests filled (the process served the thread before,
   * as the Postgres store's `contextCache` keeps it); false: every call converts every message (a cold process).
   */
  cached: boolean;
  /** The row's name in the report. */
  label: string;
  /** The sum of their stored counts (raw o200k tokens). */
  storedTokens: number;
  /** Timed calls (after warm-up). */
  calls: number;
  /** Milliseconds of `initialMessages()` plus one `prepareStep`, over the calls. */
  ms: Summary;
  /** CPU milliseconds of this process over the same calls (less sensitive to a loaded machine; includes GC). */
  cpuMs: Summary;
  /** The thread's next request: rows the store loaded per request (after the snapshot's boundary, and pinned ones). */
  loaded?: Summary;
}

// Seeded, varied text: a repeated string would let the tokenizer's cache flatter any recount.
function createRandom(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), state | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
const random = createRandom(7);
const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'qui', 'bel', 'dor', 'fen', 'gar', 'hul', 'jin', 'pra'];
const vocabulary = Array.from({ length: 4000 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join(
    '',
  ),
);
const sentence = (words: number) =>
  Array.from({ length: words }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');

/** A turn of about 830 tokens: a question, then reasoning, a tool call with a JSON result and an answer. */
export function turn(index: number): ContextUIMessage[] {
  return [
    { id: `u${index}`, role: 'user', parts: [{ type: 'text', text: `Question ${index}: ${sentence(40)}?` }] },
    {
      id: `a${index}`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: sentence(40) },
        {
          type: 'tool-search',
          toolCallId: `call-${index}`,
          state: 'output-available',
          input: { query: sentence(3), limit: 6 },
          output: { items: Array.from({ length: 6 }, (_item, item) => ({ id: item, snippet: sentence(17) })) },
        },
        { type: 'step-start' },
        { type: 'text', text: sentence(95) },
      ],
    },
  ];
}

/**
 * The stored row of `message` at `sequence`, as the Postgres store loads it: a row id, content version, byte size and
 * stored counts (per-part counts when `parts`); the first row is pinned.
 */
export function storedRow(message: ContextUIMessage, sequence: number, tokenCounter: TokenCounter, parts = true) {
  return {
    rowId: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    contentVersion: 1,
    byteSize: JSON.stringify(message.parts).length,
    sequence,
    message,
    status: 'completed',
    contextState: 'eligible',
    pinned: sequence === 1,
    tokenCount: countStoredMessageTokens({ message, tokenCounter }),
    tokenCounterId: storedTokenCountId(tokenCounter),
    partTokenCounts: parts ? countStoredPartTokens({ message, tokenCounter }) : null,
    deletedAt: null,
  } satisfies ContextMessage;
}

function threadOf(size: number, tokenCounter: TokenCounter, parts: boolean) {
  const rows: ContextMessage[] = [];
  for (let index = 0; rows.length < size - 1; index++)
    for (const message of turn(index))
      if (rows.length < size - 1) rows.push(storedRow(message, rows.length + 1, tokenCounter, parts));
  const last: ContextUIMessage = { id: 'last', role: 'user', parts: [{ type: 'text', text: 'And next quarter?' }] };
  rows.push({
    ...rows[0]!,
    rowId: `00000000-0000-4000-8000-${String(size).padStart(12, '0')}`,
    sequence: size,
    message: last,
    pinned: false,
    tokenCount: countStoredMessageTokens({ message: last, tokenCounter }),
    partTokenCounts: parts ? countStoredPartTokens({ message: last, tokenCounter }) : null,
  });
  return rows;
}

/**
 * The first call of a request as an app makes it: a new context manager (with `tokenCounter`, else the default
 * counter), `initialMessages()`, then the first `prepareStep`.
 */
export async function firstCall(store: ContextStore, tokenCounter?: TokenCounter): Promise<void> {
  const manager = createContextManager({
    store,
    model: 'openai:gpt-4o',
    maxOutputTokens: 8192,
    ...(tokenCounter ? { tokenCounter } : {}),
  });
  const messages = await manager.initialMessages({ instructions: 'You are an analyst.' });
  await manager.prepareStep({
    messages,
    stepNumber: 0,
    steps: [],
    instructions: 'You are an analyst.',
    initialMessages: messages,
    responseMessages: [] as ModelMessage[],
  } as never);
}

/** A store that hands out the prepared view and accepts (but does not keep) summaries and snapshots. */
function benchStore(next: () => LoadedContext, cache: () => ContextMessageCache | undefined): ContextStore {
  return {
    // The cache the round uses (a getter: `'previous'` starts each round with a fresh one).
    get messageCache() {
      return cache();
    },
    loadContext: async () => next(),
    writeSummary: async () => {
      throw new Error('W7 runs without a summarizer');
    },
    writeSnapshot: async (input) =>
      ({ ...input, id: 'snapshot', version: input.expectedVersion + 1, stepNumber: null }) as ContextSnapshot,
  };
}

/**
 * How the store's message cache stands when a call starts: `'same'`, the process served this very thread before
 * (the warm-up calls fill one cache, as one `createAgentHistory` holds it); `'previous'`, it served the thread's
 * previous request (the thread without its newest question and the answer before it), in a fresh cache each call, so
 * every call converts the newest turn and prunes what moved; `'none'`, no cache (a cold process).
 */
export type FirstCallCache = 'same' | 'previous' | 'none';

/** Measures `initialMessages()` plus one `prepareStep` on a thread of `size` messages, `calls` times. */
export async function measureFirstCall(
  size: number,
  calls: number,
  partCounts = true,
  cache: FirstCallCache = 'same',
): Promise<FirstCallResult> {
  const tokenCounter = await loadO200kTokenCounter();
  const rows = threadOf(size, tokenCounter, partCounts);
  const base: LoadedContext = { snapshot: null, latestSummary: null, tail: rows, pinned: [], currentVersion: 0 };
  // The previous request's thread ends with the question before the newest one.
  const previous: LoadedContext = { ...base, tail: rows.slice(0, -2) };
  let view: LoadedContext | undefined;
  const newCache = () => createContextMessageCache().scoped('tenant\u0000thread');
  let messageCache = cache === 'none' ? undefined : newCache();
  const store = benchStore(
    () => {
      // Handed over, not kept: a store parses each load afresh and holds no reference to it.
      const loaded = view!;
      view = undefined;
      return loaded;
    },
    () => messageCache,
  );
  const call = () => firstCall(store, tokenCounter);
  const times: number[] = [];
  const cpuTimes: number[] = [];
  const warmup = 5;
  for (let round = 0; round < calls + warmup; round++) {
    if (cache === 'previous') {
      messageCache = newCache();
      view = structuredClone(previous);
      await call();
    }
    view = structuredClone(base);
    const cpuStarted = process.cpuUsage();
    const started = performance.now();
    await call();
    const elapsed = performance.now() - started;
    const cpu = process.cpuUsage(cpuStarted);
    if (round >= warmup) {
      times.push(elapsed);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
    }
  }
  const cacheLabel = { same: 'cache warm', previous: 'cache from the previous request', none: 'no cache' }[cache];
  return {
    messages: size,
    partCounts,
    cached: cache !== 'none',
    label: `${size}${partCounts ? '' : ', no per-part counts'}, ${cacheLabel}`,
    storedTokens: rows.reduce((sum, row) => sum + (row.tokenCount ?? 0), 0),
    calls,
    ms: summarize(times),
    cpuMs: summarize(cpuTimes),
  };
}

/**
 * W7 as bench/run.ts records it: the worst case, a thread without a snapshot compacted whole, at 600 messages
 * (median, p99) and 2,000 (median), with per-part counts as the store writes them, the cache warm from the same
 * thread, from the previous request, and without a cache; the 600-message thread with message counts only (old
 * rows), without a cache; then the thread's next request (its snapshot and the process's cache, as most requests of
 * a long thread find them: `w7-next-request.ts`) at 600 and 2,000 messages.
 */
export async function runFirstCall({ calls }: { calls: number }): Promise<FirstCallResult[]> {
  const fewer = Math.max(20, Math.floor(calls / 4));
  // The next-request rows run last: they leave a large heap (a thread's cache and what the engine keeps of it),
  // which would slow the rows after them.
  return [
    await measureFirstCall(600, calls),
    await measureFirstCall(2_000, fewer),
    await measureFirstCall(600, fewer, true, 'previous'),
    await measureFirstCall(2_000, fewer, true, 'previous'),
    await measureFirstCall(600, fewer, true, 'none'),
    await measureFirstCall(2_000, fewer, true, 'none'),
    await measureFirstCall(600, fewer, false, 'none'),
    await measureNextRequest(600, calls),
    await measureNextRequest(2_000, fewer),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const calls = Number(process.env.BENCH_W7_CALLS ?? 200);
  for (const result of await runFirstCall({ calls }))
    console.log(
      `${result.label}: ${result.storedTokens} stored tokens, ${result.calls} calls: median ${result.ms.p50} ms, p99 ${result.ms.p99} ms, max ${result.ms.max} ms; CPU median ${result.cpuMs.p50} ms, p99 ${result.cpuMs.p99} ms`,
    );
}
