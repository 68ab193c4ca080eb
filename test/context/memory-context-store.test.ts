import { describe, expect, it } from 'vitest';
import { createMemoryContextStore } from '../../src/context/index.js';
import { InvalidArgumentError, NotFoundError, VersionConflictError } from '../../src/errors/index.js';
import { user } from './fixtures.js';

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

function threeMessages() {
  const store = createMemoryContextStore();
  for (const id of ['u1', 'u2', 'u3']) store.appendMessage({ message: user(id, id), pinned: id === 'u1' });
  return store;
}

describe('createMemoryContextStore', () => {
  it('should load every message as the tail of a thread without snapshot', async () => {
    const loaded = await threeMessages().loadContext();
    expect(loaded).toMatchObject({ snapshot: null, latestSummary: null, pinned: [], currentVersion: 0 });
    expect(loaded.tail.map((message) => message.sequence)).toEqual([1, 2, 3]);
  });

  it('should start the tail strictly after the snapshot boundary and return pinned messages at or before it', async () => {
    const store = threeMessages();
    await store.writeSnapshot(snapshotInput(0, 1));
    const loaded = await store.loadContext();
    expect(loaded.tail.map((message) => message.sequence)).toEqual([2, 3]);
    expect(loaded.pinned.map((message) => message.sequence)).toEqual([1]);
    expect(loaded.currentVersion).toBe(1);
  });

  it('should write snapshot expectedVersion + 1 and refuse a stale version without overwriting', async () => {
    const store = threeMessages();
    expect(await store.writeSnapshot(snapshotInput(0))).toMatchObject({ id: 'snapshot-1', version: 1 });
    await expect(store.writeSnapshot(snapshotInput(0))).rejects.toThrowError(
      new VersionConflictError({ entity: 'snapshot', expectedVersion: 0, actualVersion: 1 }),
    );
    expect(await store.writeSnapshot(snapshotInput(1))).toMatchObject({ version: 2 });
    expect(store.snapshots.map((snapshot) => snapshot.version)).toEqual([1, 2]);
  });

  it('should refuse an empty summary or a range outside the thread', async () => {
    const store = threeMessages();
    const summary = {
      fromSequence: 1,
      throughSequence: 2,
      content: 'x',
      tokenCount: 1,
      tokenCounterId: null,
      summarizerModel: null,
      policyVersion: 'v1',
      previousSummaryId: null,
    };
    await expect(store.writeSummary({ ...summary, content: ' ' })).rejects.toThrowError(InvalidArgumentError);
    await expect(store.writeSummary({ ...summary, throughSequence: 9 })).rejects.toThrowError(
      'Invalid summary.throughSequence 9: expected a sequence from 1 to 3.',
    );
    expect(store.summaries).toEqual([]);
  });

  it('should return the newest valid summary and mark summaries and snapshots covering a redacted message stale', async () => {
    const store = threeMessages();
    const summary = {
      content: 'x',
      tokenCount: 1,
      tokenCounterId: null,
      summarizerModel: null,
      policyVersion: 'v1',
      previousSummaryId: null,
    };
    await store.writeSummary({ ...summary, fromSequence: 1, throughSequence: 1 });
    await store.writeSummary({ ...summary, fromSequence: 1, throughSequence: 2 });
    await store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: 'summary-2' });
    expect((await store.loadContext()).latestSummary?.id).toBe('summary-2');
    store.redactMessage(2);
    const loaded = await store.loadContext();
    expect(loaded.latestSummary?.id).toBe('summary-1');
    expect(loaded.snapshot).toBeNull();
    expect(loaded.currentVersion).toBe(1);
    expect(loaded.tail.find((message) => message.sequence === 2)).toMatchObject({
      contextState: 'redacted',
      message: { parts: [] },
    });
  });

  it('should refuse a snapshot naming an unknown summary, and store one naming a stale summary as stale', async () => {
    const store = threeMessages();
    await expect(store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: 'summary-404' })).rejects.toThrowError(
      new NotFoundError({ entity: 'summary', id: 'summary-404' }),
    );
    expect((await store.loadContext()).currentVersion).toBe(0);
    await store.writeSummary({
      content: 'x',
      tokenCount: 1,
      tokenCounterId: null,
      summarizerModel: null,
      policyVersion: 'v1',
      previousSummaryId: null,
      fromSequence: 1,
      throughSequence: 2,
    });
    // The engine read the summary, then a redaction made it stale before the snapshot was written.
    store.redactMessage(2);
    expect(await store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: 'summary-1' })).toMatchObject({ version: 1 });
    const loaded = await store.loadContext();
    expect([loaded.snapshot, loaded.currentVersion]).toEqual([null, 1]);
  });
});
