import { describe, expect, it } from 'vitest';
import { createMemoryContextStore } from '../../src/testing/index.js';
import { NotFoundError } from '../../src/errors/index.js';
import { user } from './fixtures.js';

// What only the in-memory store does; the ContextStore contract it shares with the Postgres store is
// test/model/context-store-contract.ts.
const snapshotInput = (expectedVersion: number, throughSequence = 1) => ({
  expectedVersion,
  throughSequence,
  summaryId: null,
  includedSequences: [2, 3],
  pruned: {},
  budget: {},
  policyVersion: 'v1',
  messagesHash: 'hash',
});
const summaryInput = (fromSequence: number, throughSequence: number) => ({
  fromSequence,
  throughSequence,
  content: 'x',
  tokenCount: 1,
  tokenCounterId: null,
  summarizerModel: null,
  policyVersion: 'v1',
  previousSummaryId: null,
});

function threeMessages() {
  const store = createMemoryContextStore();
  for (const id of ['u1', 'u2', 'u3']) store.appendMessage({ message: user(id, id), pinned: id === 'u1' });
  return store;
}

describe('createMemoryContextStore', () => {
  it('should name summaries and snapshots summary-1, snapshot-1, … by default', async () => {
    const store = threeMessages();
    expect(await store.writeSnapshot(snapshotInput(0))).toMatchObject({ id: 'snapshot-1', version: 1 });
    await store.writeSummary(summaryInput(1, 1));
    await store.writeSummary(summaryInput(1, 2));
    expect((await store.loadContext()).latestSummary?.id).toBe('summary-2');
  });

  it('should empty the parts of a redacted message', async () => {
    const store = threeMessages();
    store.redactMessage(2);
    expect((await store.loadContext()).tail.find((message) => message.sequence === 2)).toMatchObject({
      contextState: 'redacted',
      message: { parts: [] },
    });
  });

  it('should refuse a snapshot naming an unknown summary id that is not a uuid with NotFoundError', async () => {
    const store = threeMessages();
    await expect(store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: 'summary-404' })).rejects.toThrowError(
      new NotFoundError({ entity: 'summary', id: 'summary-404' }),
    );
    expect((await store.loadContext()).currentVersion).toBe(0);
  });
});
