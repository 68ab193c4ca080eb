// Attacks on what the engine remembers per frozen segment (`SegmentFacts`: reasoning, tool parts, call ids, pruned
// forms, the last decision) and per cached row (its segment, reused while sequence, pin and stored count match).
// Requests of one thread share a cache but not a policy: each draws its own pruning (reasoning and tool traffic on
// other turns, empty messages kept or removed) and may summarize, so the same frozen segment reaches the pruning
// under other decisions, in other positions (current input, protected turn, older turn), request after request.
// Between requests rows change without a new content version: pinned, re-statused, recounted by another counter
// or with another count, their per-part counts dropped or changed. Every model call, report and snapshot must
// equal an engine's without the cache.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { storedTokenCountId, type ContextPolicyInput, type ContextReport } from '../../../src/context/index.js';
import type { ContextMessage, ContextMessageCache, ContextStore } from '../../../src/model/context-store.js';
import { createContextMessageCache } from '../../../src/tokens/context-message-cache.js';
import { scopeTokenCounter } from '../../../src/tokens/token-counter.js';
import { createMemoryContextStore } from '../../../src/testing/memory-context-store.js';
import { createRandom, generateConversation, type GeneratedConversation } from '../../support/agent-conversations.js';
import { drawPolicy, withRowId } from '../../support/generated-threads.js';
import { createGeneratedEngine, walkGeneratedRequest } from '../../support/check-generated-context.js';
import { withStoredCounts } from '../../support/stored-counts.js';
import { tokenCounter } from '../fixtures.js';
import { snapshotKeepingStore } from '../../../bench/workloads/w7-next-request.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const timeout = 120_000 + RUNS * 4_000;

type Random = ReturnType<typeof createRandom>;

// Requests made so far: each cached request's counter is scoped apart.
let requests = 0;

async function walk(
  conversation: GeneratedConversation,
  rows: readonly ContextMessage[],
  policy: ContextPolicyInput,
  cache: ContextMessageCache | undefined,
) {
  const memory = createMemoryContextStore({ messages: rows });
  const store: ContextStore = {
    loadContext: () => memory.loadContext(),
    writeSummary: (input) => memory.writeSummary(input),
    writeSnapshot: (input) => memory.writeSnapshot(input),
    searchMessages: (input) => memory.searchMessages!(input),
    ...(cache ? { messageCache: cache } : {}),
  };
  // A counter object of this request's own, of the shared counter's id, as every request's engine has: what the
  // engine remembers by counter id must be found, and be right, across them.
  const counter = cache ? scopeTokenCounter(tokenCounter, `request:${++requests}`) : tokenCounter;
  const engine = createGeneratedEngine(conversation, store as typeof memory, counter, undefined, policy);
  const calls: Array<{ messages: unknown; report: Omit<ContextReport, 'durationMs'> }> = [];
  const keep = (messages: ModelMessage[], report: ContextReport) => {
    const { durationMs: _durationMs, ...rest } = report;
    calls.push({ messages: JSON.parse(JSON.stringify(messages)) as unknown, report: rest });
  };
  const refused = await walkGeneratedRequest(engine, conversation, keep, true);
  return { calls, snapshots: memory.snapshots, summaries: memory.summaries, refused };
}

/** A change of the row that keeps its content version. */
function changeRow(row: ContextMessage, random: Random): ContextMessage {
  switch (random.int(0, 5)) {
    case 0:
      return { ...row, pinned: !row.pinned };
    case 1: // recounted by another counter: the stored count no longer applies
      return {
        ...row,
        tokenCounterId: row.tokenCounterId === 'other/1' ? storedTokenCountId(tokenCounter) : 'other/1',
      };
    case 2: // another stored count for the same counter (a custom store's, or a recount's)
      return row.tokenCount == null ? row : { ...row, tokenCount: row.tokenCount + random.int(1, 50) };
    // Per-part counts dropped (a row written before they were kept), or recounted to others under the same counter
    // id (a custom store's counts, a recount after the tokenizer changed under the same id): the same version.
    case 3:
      if (!row.partTokenCounts || random.chance(0.5)) return { ...row, partTokenCounts: null };
      return {
        ...row,
        partTokenCounts: row.partTokenCounts.map((count) => count + 1),
        tokenCount: row.partTokenCounts.reduce((sum, count) => sum + count + 1, 0),
      };
    case 4:
      return row.message.role === 'assistant'
        ? { ...row, status: row.status === 'completed' ? 'failed' : 'completed' }
        : { ...row, pinned: !row.pinned };
    default:
      return { ...row, contextState: row.contextState === 'excluded' ? 'eligible' : 'excluded' };
  }
}

describe('segment facts and cached segments, across requests that decide differently', () => {
  it(
    'should serve every request exactly as without the cache',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.constantFrom<[number, number]>([400, 4_000], [2_000, 30_000], [20_000, 200_000]),
          async (seed, budget) => {
            const generated = generateConversation(seed, { maxMessages: 160, budget });
            const base = withStoredCounts(generated, tokenCounter);
            const random = createRandom(seed ^ 0xfac7);
            const cache = createContextMessageCache().scoped('tenant\u0000thread');
            let rows: ContextMessage[] = base.rows.map((row) => withRowId(row, seed));
            const ends = [Math.ceil(rows.length / 2), Math.ceil((3 * rows.length) / 4), rows.length, rows.length];
            for (const [request, end] of ends.entries()) {
              if (request > 0) rows = rows.map((row) => (random.chance(0.15) ? changeRow(row, random) : row));
              const conversation = { ...base, summarizer: random.chance(0.3) };
              const policy = drawPolicy(random);
              const served = rows.slice(0, end);
              const cached = await walk(conversation, served, policy, cache);
              const plain = await walk(conversation, served, policy, undefined);
              expect(cached).toEqual(plain);
            }
          },
        ),
        { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
      );
    },
    timeout,
  );
});

describe('segment facts and cached segments, on the next requests of a thread with its snapshot', () => {
  it(
    'should serve each next request, from its snapshot and the cache, exactly as without the cache',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.constantFrom<[number, number]>([400, 4_000], [2_000, 30_000], [20_000, 200_000]),
          async (seed, budget) => {
            const generated = generateConversation(seed, { maxMessages: 160, budget });
            const conversation = { ...withStoredCounts(generated, tokenCounter), summarizer: false };
            const random = createRandom(seed ^ 0x5eed);
            const policy = drawPolicy(random);
            const cached = snapshotKeepingStore(createContextMessageCache().scoped('tenant\u0000thread'));
            const plain = snapshotKeepingStore();
            let rows: ContextMessage[] = conversation.rows.map((row) => withRowId(row, seed));
            for (let end = Math.min(rows.length, 4); ; end = Math.min(rows.length, end + random.int(1, 6))) {
              rows = rows.map((row, index) => (index < end - 1 && random.chance(0.05) ? changeRow(row, random) : row));
              const served = rows.slice(0, end);
              const results = [];
              for (const thread of [cached, plain]) {
                thread.serve(served);
                const engine = createGeneratedEngine(
                  conversation,
                  thread.store as never,
                  thread === cached ? scopeTokenCounter(tokenCounter, `request:${++requests}`) : tokenCounter,
                  undefined,
                  policy,
                );
                const calls: unknown[] = [];
                const refused = await walkGeneratedRequest(
                  engine,
                  conversation,
                  (messages, report) => {
                    const { durationMs: _durationMs, ...rest } = report;
                    calls.push({ messages: JSON.parse(JSON.stringify(messages)) as unknown, report: rest });
                  },
                  end === rows.length,
                );
                results.push({ calls, refused, snapshots: thread.snapshots });
              }
              expect(results[0]).toEqual(results[1]);
              if (end === rows.length) break;
            }
          },
        ),
        { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
      );
    },
    timeout,
  );
});
