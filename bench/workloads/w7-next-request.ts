// W7, the thread's next request: what most requests of a long thread are. The thread grows by one question and its
// answer per request; each request is a new context manager (one per request, as an app makes) whose
// `initialMessages()` plus one `prepareStep` are timed. Between requests the store keeps what a store keeps: the
// snapshot the previous request wrote (its boundary moves past the turns the trim set aside, so the store loads only
// the messages after it, and the pinned ones) and, in the process, the message cache. The timed calls span the
// thread from `size - calls` to `size + calls` messages, so their median is the thread at about `size`; every few
// dozen requests the context outgrows the budget and is cut again to `targetRatio`, which the p99 shows.
// Each request's rows are fresh copies made before the clock starts, as a store's load parses them (the read is W3),
// and each request's manager counts with the default counter, as an app's does (a counter object of its own).
//
//   npx tsx bench/workloads/w7-next-request.ts       # 600 messages (200 requests) and 2,000 (50)
import { pathToFileURL } from 'node:url';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import type {
  ContextMessage,
  ContextMessageCache,
  ContextSnapshot,
  ContextStore,
  LoadedContext,
} from '../../src/model/context-store.js';
import { createContextMessageCache } from '../../src/tokens/context-message-cache.js';
import { summarize } from '../stats.js';
import { firstCall, storedRow, turn, type FirstCallResult } from './w7-first-call.js';

/**
 * A store of one thread that keeps what a store keeps between requests: the snapshot each request writes (`snapshots`
 * lists them all) and, when given, a message cache. `serve(rows)` parses its next load: the rows after the newest
 * snapshot's boundary and the pinned ones before it, as fresh copies. Also used by the engine's tests of the next
 * request (test/context/engine/segment-facts-attack.test.ts).
 */
export function snapshotKeepingStore(cache?: ContextMessageCache) {
  let snapshot: ContextSnapshot | null = null;
  const snapshots: ContextSnapshot[] = [];
  let view: LoadedContext | undefined;
  const store: ContextStore = {
    ...(cache ? { messageCache: cache } : {}),
    loadContext: async () => {
      // Handed over, not kept: a store parses each load afresh and holds no reference to it.
      const loaded = view!;
      view = undefined;
      return loaded;
    },
    writeSummary: async () => {
      throw new Error('no summarizer');
    },
    writeSnapshot: async (input) => {
      if (input.expectedVersion !== (snapshot?.version ?? 0)) throw new Error('a snapshot version was skipped');
      snapshot = {
        id: `snapshot-${input.expectedVersion + 1}`,
        version: input.expectedVersion + 1,
        throughSequence: input.throughSequence,
        summaryId: input.summaryId ?? null,
        includedSequences: input.includedSequences,
        pruned: input.pruned ?? [],
        budget: input.budget ?? {},
        policyVersion: input.policyVersion,
        messagesHash: input.messagesHash,
        stepNumber: input.stepNumber ?? null,
      };
      snapshots.push(structuredClone(snapshot));
      return snapshot;
    },
  };
  return {
    store,
    snapshots,
    /** Parses the next load of `rows` (before the clock); returns how many rows it loads after the boundary. */
    serve(rows: readonly ContextMessage[]) {
      const boundary = snapshot?.throughSequence ?? 0;
      view = structuredClone({
        snapshot,
        latestSummary: null,
        currentVersion: snapshot?.version ?? 0,
        tail: rows.filter((row) => row.sequence > boundary),
        pinned: rows.filter((row) => row.pinned === true && row.sequence <= boundary),
      });
      return view.tail.length;
    },
  };
}

/** Measures `calls` consecutive requests of a thread growing through `size` messages (see the file's header). */
export async function measureNextRequest(size: number, calls: number): Promise<FirstCallResult> {
  const tokenCounter = await loadO200kTokenCounter();
  const rows: ContextMessage[] = [];
  for (let index = 0; rows.length < size + calls + 2; index++)
    for (const message of turn(index)) rows.push(storedRow(message, rows.length + 1, tokenCounter));
  const thread = snapshotKeepingStore(createContextMessageCache().scoped('tenant\u0000thread'));
  // The default counter, as an app sets the manager up: each engine gets a counter object of its own.
  const request = () => firstCall(thread.store);
  // Each request ends with the user's new question (an odd number of rows: the pinned first one, then turns).
  const first = size - calls + ((size - calls) % 2 === 0 ? 1 : 0);
  for (let length = first - 40; length < first; length += 2) {
    thread.serve(rows.slice(0, length));
    await request();
  }
  const times: number[] = [];
  const cpuTimes: number[] = [];
  const tails: number[] = [];
  for (let length = first; times.length < calls; length += 2) {
    tails.push(thread.serve(rows.slice(0, length)));
    const cpuStarted = process.cpuUsage();
    const started = performance.now();
    await request();
    times.push(performance.now() - started);
    const cpu = process.cpuUsage(cpuStarted);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
  }
  return {
    messages: size,
    partCounts: true,
    cached: true,
    label: `${size}, the thread's next request (its snapshot, the cache)`,
    storedTokens: rows.slice(0, size).reduce((sum, row) => sum + (row.tokenCount ?? 0), 0),
    calls,
    ms: summarize(times),
    cpuMs: summarize(cpuTimes),
    loaded: summarize(tails),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const [size, calls] of [
    [600, 200],
    [2_000, 50],
  ] as const) {
    const result = await measureNextRequest(size, calls);
    console.log(
      `${result.label}: ${result.calls} requests, ${result.loaded!.min}-${result.loaded!.max} rows loaded: median ${result.ms.p50} ms, p99 ${result.ms.p99} ms; CPU median ${result.cpuMs.p50} ms`,
    );
  }
}
