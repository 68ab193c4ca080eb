import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  createCachedTokenCounter,
  InvalidArgumentError,
  rebuildAllTenants,
  type RebuildProgress,
  type TenantHistory,
} from '../../src/index.js';
import { countStoredMessageTokens, storedTokenCountId } from '../../src/tokens/count-stored-message-tokens.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';

// Two tokenizer versions: the store's counter changes from v1 (words) to v2 (characters).
const counterV1 = createCachedTokenCounter('words-v1', (text) => text.split(/\s+/).filter(Boolean).length);
const counterV2 = createCachedTokenCounter('chars-v2', (text) => text.length);
const V2 = storedTokenCountId(counterV2);

const assistant = (id: string, city: string) => ({
  id,
  role: 'assistant' as const,
  parts: [
    { type: 'tool-weather', toolCallId: `call-${id}`, state: 'output-available', input: { city }, output: { c: 18 } },
    { type: 'text', text: `It is sunny in ${city} with a light breeze from the west.` },
  ],
});

async function allRows(store: TenantHistory, threadIds: string[]) {
  const rows = [];
  for (const threadId of threadIds) rows.push(...(await store.listMessages(threadId, { limit: 500 })).messages);
  return rows;
}

/** Every finished row marked v2 carries the v2 count of its current parts; streaming rows carry none. */
function expectRebuilt(rows: Awaited<ReturnType<typeof allRows>>) {
  for (const row of rows) {
    if (row.status === 'pending' || row.status === 'streaming') {
      expect(row.tokenCounterId).toBeNull();
      continue;
    }
    expect(row.tokenCounterId, row.message.id).toBe(V2);
    expect(row.tokenCount, row.message.id).toBe(
      countStoredMessageTokens({ message: row.message as never, tokenCounter: counterV2 }),
    );
  }
}

describe.each(BACKENDS)('rebuildDerivedData on %s', (backend) => {
  const database = useTestDatabase(backend);
  const stores = (tenantId = randomUUID()) => ({
    v1: createAgentHistory({ db: database.db, tokenCounter: counterV1 }).forTenant(tenantId),
    v2: createAgentHistory({ db: database.db, tokenCounter: counterV2 }).forTenant(tenantId),
  });

  async function seed(store: TenantHistory, threads: number, turns: number) {
    const ids: string[] = [];
    for (let t = 0; t < threads; t++) {
      const thread = await store.createThread({ userId: 'u1' });
      ids.push(thread.id);
      for (let i = 0; i < turns; i++) {
        await store.appendMessage(thread.id, userMessage(`u-${t}-${i}`, `Weather in city ${i} of thread ${t}?`));
        await store.appendMessage(thread.id, assistant(`a-${t}-${i}`, `City${i}`));
      }
    }
    return ids;
  }

  it('should recount every message after a counter change, with a concurrent writer and redactions', async () => {
    const { v1, v2 } = stores();
    const threads = await seed(v1, 3, 6);
    await v1.beginAssistantMessage(threads[0]!, { messageId: 'pending-1' });
    const progress: RebuildProgress[] = [];
    // An old app instance keeps appending with the old counter, and a redaction changes parts, during the rebuild.
    const writer = (async () => {
      for (let i = 0; i < 12; i++) {
        await v1.appendMessage(threads[i % 3]!, userMessage(`late-${i}`, `late message number ${i}`));
        if (i === 3) await v2.redactMessage(threads[1]!, 'a-1-2', { actor: 'test', reason: 'test' });
      }
    })();
    const first = await v2.rebuildDerivedData({ batchSize: 5, onProgress: (p) => void progress.push(p) });
    await writer;
    expect(first.tokenCounts).toBeGreaterThan(0);
    expect(progress.every((p) => p.kind === 'token-counts' && p.tenantId === v2.tenantId)).toBe(true);
    expect(progress.at(-1)!.done).toBe(first.tokenCounts);
    await v2.rebuildDerivedData({ batchSize: 5 }); // picks up what the old writer added behind the cursor
    expect(await v2.rebuildDerivedData()).toEqual({ tokenCounts: 0, summaries: 0, searchVectors: 0 }); // idempotent
    const rows = await allRows(v2, threads);
    expect(rows).toHaveLength(3 * 12 + 12 + 1);
    expectRebuilt(rows);
    for (const threadId of threads) {
      const sequences = (await allRows(v2, [threadId])).map((row) => row.sequence).sort((a, b) => a - b);
      expect(sequences).toEqual(sequences.map((_, index) => index + 1));
    }
  });

  it('should continue where a stopped rebuild left off', async () => {
    const { v1, v2 } = stores();
    const threads = await seed(v1, 2, 5);
    const stop = new Error('stop');
    let batches = 0;
    const stopped = v2.rebuildDerivedData({
      batchSize: 4,
      onProgress: () => {
        if (++batches === 2) throw stop;
      },
    });
    await expect(stopped).rejects.toBe(stop);
    const halfway = await allRows(v2, threads);
    expect(halfway.filter((row) => row.tokenCounterId === V2)).toHaveLength(8);
    expect((await v2.rebuildDerivedData({ batchSize: 4 })).tokenCounts).toBe(20 - 8);
    expectRebuilt(await allRows(v2, threads));
    const aborted = new AbortController();
    aborted.abort();
    await expect(v1.rebuildDerivedData({ signal: aborted.signal })).rejects.toThrow();
  });

  it('should mark summaries of another policy version stale, with their snapshots, once', async () => {
    const { v2 } = stores();
    const [threadId] = await seed(v2, 1, 3);
    const old = await v2.writeSummary(threadId!, {
      fromSequence: 1,
      throughSequence: 2,
      content: 'old policy summary',
      tokenCount: 3,
      policyVersion: 'p1',
    });
    await v2.writeSnapshot(threadId!, {
      expectedVersion: 0,
      throughSequence: 2,
      summaryId: old.id,
      includedSequences: [3, 4],
      policyVersion: 'p1',
      messagesHash: 'h',
    });
    const current = await v2.writeSummary(threadId!, {
      fromSequence: 3,
      throughSequence: 4,
      content: 'current policy summary',
      tokenCount: 3,
      policyVersion: 'p2',
    });
    expect((await v2.loadContext(threadId!)).snapshot).not.toBeNull();
    const result = await v2.rebuildDerivedData({ tokenCounts: false, summaryPolicyVersion: 'p2', batchSize: 1 });
    expect(result).toEqual({ tokenCounts: 0, summaries: 1, searchVectors: 0 });
    const summaries = await v2.listSummaries(threadId!);
    expect(summaries.map((s) => [s.id, s.stale])).toEqual([
      [old.id, true],
      [current.id, false],
    ]);
    expect((await v2.loadContext(threadId!)).snapshot).toBeNull();
    expect((await v2.rebuildDerivedData({ tokenCounts: false, summaryPolicyVersion: 'p2' })).summaries).toBe(0);
    await expect(v2.rebuildDerivedData({ batchSize: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(v2.rebuildDerivedData({ summaryPolicyVersion: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('should rebuild every listed tenant through the app login, each within its own rows', async () => {
    const a = stores();
    const b = stores();
    const threadsA = await seed(a.v1, 1, 2);
    const threadsB = await seed(b.v1, 1, 3);
    const history = createAgentHistory({ db: database.db, tokenCounter: counterV2 });
    const results = [];
    for await (const result of rebuildAllTenants(history, [a.v1.tenantId, b.v1.tenantId])) results.push(result);
    expect(results).toEqual([
      { tenantId: a.v1.tenantId, tokenCounts: 4, summaries: 0, searchVectors: 0 },
      { tenantId: b.v1.tenantId, tokenCounts: 6, summaries: 0, searchVectors: 0 },
    ]);
    expectRebuilt(await allRows(a.v2, threadsA));
    expectRebuilt(await allRows(b.v2, threadsB));
  });
});
