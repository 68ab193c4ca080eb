// A store's message cache (`ContextStore.messageCache`) keeps each row's converted messages between requests. The
// rule: a request served from the cache is exactly the request served without it. Over generated conversations
// (test/support/agent-conversations.ts) a thread is served as it grows, request after request, by new engines
// sharing one cache, while between requests rows change as they do in a store: edited or redacted (a new
// `contentVersion`), re-statused (an answer recovered as failed, same parts and version), pinned, excluded,
// deleted, and approvals left pending in one request and superseded by a newer user message in the next (the
// filter then closes them, a change the row's version does not show). Every model call, report and snapshot must
// equal an engine's without the cache on the same rows; what the cache holds must never be another version's.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import {
  countStoredPartTokens,
  createContextEngine,
  resolveModelProfile,
  storedTokenCountId,
  type ContextReport,
} from '../../../src/context/index.js';
import type { ContextMessage, ContextMessageCache, ContextStore } from '../../../src/model/context-store.js';
import type { TokenCounter } from '../../../src/tokens/token-counter.js';
import { createContextMessageCache } from '../../../src/tokens/context-message-cache.js';
import { createMemoryContextStore } from '../../../src/testing/memory-context-store.js';
import { createRandom, generateConversation, type GeneratedConversation } from '../../support/agent-conversations.js';
import { createGeneratedEngine, walkGeneratedRequest } from '../../support/check-generated-context.js';
import { withStoredCounts } from '../../support/stored-counts.js';
import { tokenCounter } from '../fixtures.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const timeout = 120_000 + RUNS * 3_000;

interface Walk {
  calls: Array<{ messages: ModelMessage[]; report: Omit<ContextReport, 'durationMs'> }>;
  snapshots: readonly unknown[];
  refused: string | null;
}

async function walk(
  conversation: GeneratedConversation,
  rows: readonly ContextMessage[],
  counter: TokenCounter,
  steps: boolean,
  cache: ContextMessageCache | undefined,
): Promise<Walk> {
  const memory = createMemoryContextStore({ messages: rows });
  const store: ContextStore = {
    loadContext: () => memory.loadContext(),
    writeSummary: (input) => memory.writeSummary(input),
    writeSnapshot: (input) => memory.writeSnapshot(input),
    searchMessages: (input) => memory.searchMessages!(input),
    ...(cache ? { messageCache: cache } : {}),
  };
  const engine = createGeneratedEngine(conversation, store as typeof memory, counter);
  const calls: Walk['calls'] = [];
  const keep = (messages: ModelMessage[], report: ContextReport) => {
    const { durationMs: _durationMs, ...rest } = report;
    calls.push({ messages: [...messages], report: rest });
  };
  const refused = await walkGeneratedRequest(engine, conversation, keep, steps);
  return { calls, snapshots: memory.snapshots, refused };
}

/** Row identity as the Postgres store gives it: a row id, a content version and a byte size. */
function withRowIdentity(rows: readonly ContextMessage[], seed: number): ContextMessage[] {
  return rows.map((row) => ({
    ...row,
    rowId: `${seed.toString(16).padStart(8, '0')}-0000-4000-8000-${String(row.sequence).padStart(12, '0')}`,
    contentVersion: 1,
    byteSize: JSON.stringify(row.message.parts).length,
  }));
}

/** Recounted as the store recounts a row whose parts changed. */
function recounted(row: ContextMessage): ContextMessage {
  if (row.tokenCount == null) return row;
  const partTokenCounts = countStoredPartTokens({ message: row.message, tokenCounter });
  return {
    ...row,
    tokenCount: partTokenCounts.reduce((sum, count) => sum + count, 0),
    tokenCounterId: storedTokenCountId(tokenCounter),
    partTokenCounts: row.partTokenCounts ? partTokenCounts : null,
  };
}

/** What a store may do to a row between two requests. */
function changeRow(row: ContextMessage, random: ReturnType<typeof createRandom>, request: number): ContextMessage {
  const version = (row.contentVersion ?? 1) + 1;
  switch (random.int(0, 5)) {
    case 0: // edited: new parts, a new version
      return recounted({
        ...row,
        contentVersion: version,
        message: {
          ...row.message,
          parts: [...row.message.parts, { type: 'text', text: `Edited before request ${request}.` }],
        },
      });
    case 1: // redacted
      return {
        ...row,
        contentVersion: version,
        contextState: 'redacted',
        message: { ...row.message, parts: [{ type: 'text', text: '[redacted]' }] },
      };
    case 2: // an answer recovered or re-statused: same parts, same version
      return row.message.role === 'assistant'
        ? { ...row, status: row.status === 'completed' ? 'failed' : 'completed' }
        : { ...row, pinned: !row.pinned };
    case 3:
      return { ...row, contextState: row.contextState === 'excluded' ? 'eligible' : 'excluded' };
    case 4:
      return { ...row, pinned: !row.pinned };
    default:
      return { ...row, deletedAt: row.deletedAt ? null : new Date(0) };
  }
}

/** Where the thread is cut into requests: thirds, and just after a message that leaves an approval pending. */
function requestEnds(rows: readonly ContextMessage[], random: ReturnType<typeof createRandom>): number[] {
  const ends = new Set<number>([Math.ceil(rows.length / 3), Math.ceil((2 * rows.length) / 3), rows.length]);
  rows.forEach((row, index) => {
    const pending = row.message.parts.some((part) => (part as { state?: string }).state === 'approval-requested');
    if (pending && index + 1 < rows.length && random.chance(0.5)) ends.add(index + 1);
  });
  return [...ends].filter((end) => end > 0).sort((a, b) => a - b);
}

describe('the message cache', () => {
  it(
    'should serve every request of a growing, changing thread exactly as without the cache',
    async () => {
      let hits = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.constantFrom<[number, number]>([100, 600], [400, 4_000], [2_000, 30_000], [20_000, 200_000]),
          fc.constantFrom(0, 0.05, 0.3),
          async (seed, budget, changeShare) => {
            const generated = generateConversation(seed, { maxMessages: 240, budget });
            const conversation = { ...withStoredCounts(generated, tokenCounter), summarizer: false };
            const random = createRandom(seed ^ 0xcac4e);
            const shared = createContextMessageCache();
            const cache = shared.scoped('tenant\u0000thread');
            let rows = withRowIdentity(conversation.rows, seed);
            const ends = requestEnds(rows, random);
            for (const [request, end] of ends.entries()) {
              if (request > 0)
                rows = rows.map((row, index) =>
                  index < ends[request - 1]! && random.chance(changeShare) ? changeRow(row, random, request) : row,
                );
              const served = rows.slice(0, end);
              const last = end === rows.length;
              const before = shared.size;
              const cached = await walk(conversation, served, tokenCounter, last, cache);
              const plain = await walk(conversation, served, tokenCounter, last, undefined);
              expect(cached).toEqual(plain);
              // Served from the cache: rows converted by an earlier request were held when this one started.
              if (request > 0 && before > 0) hits += 1;
            }
          },
        ),
        { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
      );
      expect(hits).toBeGreaterThan(0);
    },
    timeout,
  );
});

describe('the message cache, between a redaction and a request that read the row before it', () => {
  it("should keep refusing the redacted row's old form while another thread's excluded rows are loaded", async () => {
    const shared = createContextMessageCache();
    // A redaction withdrew thread A's row: a request that read it before must not store its old form.
    const threadA = shared.scoped('tenant\u0000thread-a');
    threadA.withdraw('row-a');
    // Thread B: more rows than the cache remembers withdrawals, served once, then all excluded and served again.
    const rows: ContextMessage[] = Array.from({ length: 4_200 }, (_row, index) => ({
      rowId: `row-b-${index}`,
      contentVersion: 1,
      sequence: index + 1,
      message: {
        id: `m${index}`,
        role: index % 2 === 0 ? 'user' : 'assistant',
        parts: [{ type: 'text', text: `Message ${index}.` }],
      },
      status: 'completed',
      contextState: 'eligible',
      tokenCount: null,
      tokenCounterId: null,
      deletedAt: null,
    }));
    const serve = async (served: readonly ContextMessage[]) => {
      const memory = createMemoryContextStore({ messages: served });
      const store: ContextStore = {
        loadContext: () => memory.loadContext(),
        writeSummary: (input) => memory.writeSummary(input),
        writeSnapshot: (input) => memory.writeSnapshot(input),
        messageCache: shared.scoped('tenant\u0000thread-b'),
      };
      const engine = createContextEngine({ store, profile: resolveModelProfile({ modelId: 'gpt-4o' }), tokenCounter });
      await engine.buildInitialContext();
    };
    await serve(rows);
    expect(shared.size).toBeGreaterThan(4_096);
    const last = rows.at(-1)!;
    await serve([...rows.slice(0, -1).map((row) => ({ ...row, contextState: 'excluded' as const })), last]);
    // The excluded rows left the cache, and the withdrawal of A's row still holds.
    expect(shared.size).toBeLessThanOrEqual(1);
    threadA.set('row-a', 'old', { text: 'card 4111' }, 10);
    expect(threadA.get('row-a', 'old')).toBeUndefined();
  });
});

describe('the message cache and a store that gives no size', () => {
  it('should weigh rows by their content when the store gives no byte size, and stay within its bound', async () => {
    const shared = createContextMessageCache({ maxBytes: 200_000 });
    const big = (index: number): ContextMessage => ({
      rowId: `row-${index}`,
      contentVersion: 1,
      sequence: index + 1,
      message: {
        id: `m${index}`,
        role: index % 2 === 0 ? 'user' : 'assistant',
        parts: [{ type: 'text', text: `${index} `.repeat(50_000) }],
      },
      status: 'completed',
      contextState: 'eligible',
      tokenCount: null,
      tokenCounterId: null,
      deletedAt: null,
      // A custom store's rows: no byteSize, or a wrong one.
      ...(index % 2 === 0 ? {} : { byteSize: Number.NaN }),
    });
    const memory = createMemoryContextStore({ messages: Array.from({ length: 6 }, (_row, index) => big(index)) });
    const store: ContextStore = {
      loadContext: () => memory.loadContext(),
      writeSummary: (input) => memory.writeSummary(input),
      writeSnapshot: (input) => memory.writeSnapshot(input),
      messageCache: shared.scoped('tenant\u0000thread'),
    };
    const engine = createContextEngine({
      store,
      profile: resolveModelProfile({ modelId: 'gpt-4o' }),
      tokenCounter,
      maxInputTokens: 1_000_000,
    });
    await engine.buildInitialContext();
    // Each row is over 100 KB of text: at most one fits the bound, however the store sized it.
    expect(shared.bytes).toBeLessThanOrEqual(200_000);
    expect(shared.size).toBeLessThanOrEqual(1);
  });
});
