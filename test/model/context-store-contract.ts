import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  NotFoundError,
  SnapshotBoundaryError,
  VersionConflictError,
} from '../../src/errors/index.js';
import type { ContextStore, NewSnapshot, NewSummary } from '../../src/model/context-store.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';

/** A snapshot as it is stored (stale ones included), read around the store under test. */
export interface StoredSnapshotRow {
  version: number;
  throughSequence: number;
  messagesHash: string;
}

/** What {@link ContextStoreFixture.updateMessage} writes: the parts, an explicit content version, both or neither. */
export interface MessageChange {
  parts?: ContextUIMessage['parts'];
  contentVersion?: number;
}

/** A summary as it is stored (stale ones included), read around the store under test. */
export interface StoredSummaryRow {
  fromSequence: number;
  throughSequence: number;
}

/**
 * A {@link ContextStore} for one new, empty thread, with what the contract needs to write and read around it: a
 * `ContextStore` only reads messages, so each backend seeds them its own way, and checks that a refused write
 * wrote nothing by reading the backend directly.
 */
export interface ContextStoreFixture {
  /** The store under test. */
  store: ContextStore;
  /** Appends a completed, eligible message to the thread and returns its sequence. */
  appendMessage(message: ContextUIMessage, options?: { pinned?: boolean }): Promise<number>;
  /** Redacts the message at this sequence, as the backend's redaction does. */
  redactMessage(sequence: number): Promise<void>;
  /**
   * Writes the message at this sequence as any writer can (a plain `UPDATE` as the app login on Postgres,
   * `updateMessage` in memory): its parts, its `contentVersion`, both, or neither (then another column).
   */
  updateMessage(sequence: number, change: MessageChange): Promise<void>;
  /** Every snapshot of the thread, oldest first. */
  storedSnapshots(): Promise<StoredSnapshotRow[]>;
  /** Every summary of the thread, oldest first. */
  storedSummaries(): Promise<StoredSummaryRow[]>;
}

const user = (id: string, text: string): ContextUIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const assistant = (id: string, text: string): ContextUIMessage => ({
  id,
  role: 'assistant',
  parts: [{ type: 'step-start' }, { type: 'text', text, state: 'done' }],
});
const summaryInput = (fromSequence: number, throughSequence: number): NewSummary => ({
  fromSequence,
  throughSequence,
  content: 'x',
  tokenCount: 1,
  tokenCounterId: null,
  summarizerModel: null,
  policyVersion: 'v1',
  previousSummaryId: null,
});
const snapshotInput = (
  expectedVersion: number,
  throughSequence: number,
  messagesHash = `hash-${expectedVersion + 1}`,
): NewSnapshot => ({
  expectedVersion,
  throughSequence,
  includedSequences: [],
  policyVersion: 'policy-1',
  messagesHash,
});

/**
 * The contract every {@link ContextStore} keeps (seed 004's load / snapshot guarantees), run on each
 * implementation: `makeStore` gives a fixture for a new, empty thread on every call.
 */
export function defineContextStoreContract(name: string, makeStore: () => Promise<ContextStoreFixture>): void {
  /** Messages u1, u2, u3 (1 to 3); u1 pinned. */
  const threeMessages = async () => {
    const fixture = await makeStore();
    for (const id of ['u1', 'u2', 'u3']) await fixture.appendMessage(user(id, id), { pinned: id === 'u1' });
    return fixture;
  };
  const tailOf = async (store: ContextStore) =>
    (await store.loadContext()).tail.map((stored) => [stored.sequence, stored.message.id]);

  describe(`ContextStore contract: ${name}`, () => {
    describe('loadContext', () => {
      it('should load every message as the tail of a thread without snapshot', async () => {
        const { store } = await threeMessages();
        const loaded = await store.loadContext();
        expect(loaded).toMatchObject({ snapshot: null, latestSummary: null, pinned: [], currentVersion: 0 });
        expect(loaded.tail.map((message) => message.sequence)).toEqual([1, 2, 3]);
      });

      it('should start the tail strictly after the snapshot boundary and return pinned messages at or before it', async () => {
        const { store } = await threeMessages();
        await store.writeSnapshot({ ...snapshotInput(0, 1), includedSequences: [2, 3] });
        const loaded = await store.loadContext();
        expect(loaded.tail.map((message) => message.sequence)).toEqual([2, 3]);
        expect(loaded.pinned.map((message) => message.sequence)).toEqual([1]);
        expect(loaded.currentVersion).toBe(1);
      });

      it('should start the tail strictly after the inclusive boundary, also for messages appended later', async () => {
        const fixture = await makeStore();
        const { store } = fixture;
        for (const index of [1, 2]) {
          await fixture.appendMessage(user(`u${index}`, `question ${index}`));
          await fixture.appendMessage(assistant(`a${index}`, `answer ${index}`));
        }
        const summary = await store.writeSummary({
          fromSequence: 1,
          throughSequence: 2,
          content: 'The user asked question 1.',
          tokenCount: 6,
          policyVersion: 'policy-1',
        });
        const first = await store.writeSnapshot({
          ...snapshotInput(0, 2),
          summaryId: summary.id,
          includedSequences: [3, 4],
        });
        expect([first.version, first.throughSequence, first.summaryId]).toEqual([1, 2, summary.id]);
        let loaded = await store.loadContext();
        expect([loaded.snapshot?.id, loaded.latestSummary?.id, loaded.currentVersion]).toEqual([
          first.id,
          summary.id,
          1,
        ]);
        expect(await tailOf(store)).toEqual([
          [3, 'u2'],
          [4, 'a2'],
        ]);
        await fixture.appendMessage(user('u3', 'question 3'));
        await fixture.appendMessage(assistant('a3', 'answer 3'));
        expect((await tailOf(store)).map(([sequence]) => sequence)).toEqual([3, 4, 5, 6]);
        await store.writeSnapshot(snapshotInput(1, 6));
        loaded = await store.loadContext();
        expect([loaded.snapshot?.throughSequence, loaded.snapshot?.version, loaded.tail]).toEqual([6, 2, []]);
        await fixture.appendMessage(user('u4', 'question 4'));
        expect((await tailOf(store)).map(([sequence]) => sequence)).toEqual([7]);
      });
    });

    describe('writeSnapshot', () => {
      it('should write snapshot expectedVersion + 1 and refuse a stale version without overwriting', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        expect(await store.writeSnapshot(snapshotInput(0, 1))).toMatchObject({ version: 1 });
        await expect(store.writeSnapshot(snapshotInput(0, 1))).rejects.toThrowError(
          new VersionConflictError({ entity: 'snapshot', expectedVersion: 0, actualVersion: 1 }),
        );
        expect(await store.writeSnapshot(snapshotInput(1, 1))).toMatchObject({ version: 2 });
        expect((await fixture.storedSnapshots()).map((snapshot) => snapshot.version)).toEqual([1, 2]);
      });

      it('should reject a stale or future expected version and never overwrite the stored snapshot', async () => {
        const fixture = await makeStore();
        const { store } = fixture;
        await fixture.appendMessage(user('u1', 'hi'));
        await fixture.appendMessage(assistant('a1', 'hello'));
        await store.writeSnapshot(snapshotInput(0, 1, 'original'));
        for (const [expectedVersion, message] of [
          [0, 'Stale snapshot version: expected 0, but the current version is 1.'],
          [3, 'Stale snapshot version: expected 3, but the current version is 1.'],
        ] as const) {
          const error = await store
            .writeSnapshot(snapshotInput(expectedVersion, 2, 'intruder'))
            .catch((caught: unknown) => caught);
          expect(error).toBeInstanceOf(VersionConflictError);
          expect([(error as VersionConflictError).message, (error as VersionConflictError).actualVersion]).toEqual([
            message,
            1,
          ]);
        }
        expect(await fixture.storedSnapshots()).toEqual([{ version: 1, throughSequence: 1, messagesHash: 'original' }]);
        const loaded = await store.loadContext();
        expect([
          loaded.snapshot?.messagesHash,
          loaded.currentVersion,
          loaded.tail.map((stored) => stored.sequence),
        ]).toEqual(['original', 1, [2]]);
      });

      it('should refuse a boundary outside the thread, naming it, and write nothing', async () => {
        const fixture = await makeStore();
        await fixture.appendMessage(user('u1', 'hi'));
        await expect(fixture.store.writeSnapshot(snapshotInput(0, 2))).rejects.toThrow(
          'Invalid snapshot.throughSequence 2: expected an integer from 0 to 1.',
        );
        await expect(fixture.store.writeSnapshot(snapshotInput(0, -1))).rejects.toThrow(InvalidArgumentError);
        expect(await fixture.storedSnapshots()).toEqual([]);
      });

      it('should refuse a snapshot naming an unknown summary, and store one naming a stale summary as stale', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        const unknown = randomUUID();
        await expect(store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: unknown })).rejects.toThrowError(
          new NotFoundError({ entity: 'summary', id: unknown }),
        );
        expect((await store.loadContext()).currentVersion).toBe(0);
        const summary = await store.writeSummary(summaryInput(1, 2));
        // The engine read the summary, then a redaction made it stale before the snapshot was written.
        await fixture.redactMessage(2);
        expect(await store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: summary.id })).toMatchObject({
          version: 1,
        });
        const loaded = await store.loadContext();
        expect([loaded.snapshot, loaded.currentVersion]).toEqual([null, 1]);
      });
      it('should refuse a bad boundary or an unknown summary before comparing versions', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        await store.writeSnapshot(snapshotInput(0, 1));
        await expect(store.writeSnapshot(snapshotInput(0, 9))).rejects.toThrowError(InvalidArgumentError);
        const unknown = randomUUID();
        await expect(store.writeSnapshot({ ...snapshotInput(0, 1), summaryId: unknown })).rejects.toThrowError(
          NotFoundError,
        );
        expect((await fixture.storedSnapshots()).map((snapshot) => snapshot.version)).toEqual([1]);
      });
      it("should refuse a boundary below the previous snapshot's, naming both, and write nothing", async () => {
        const fixture = await makeStore();
        const { store } = fixture;
        for (let index = 1; index <= 5; index++) await fixture.appendMessage(user(`u${index}`, `m${index}`));
        await store.writeSnapshot(snapshotInput(0, 4));
        const error = await store.writeSnapshot(snapshotInput(1, 1)).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(SnapshotBoundaryError);
        expect(error).toMatchObject({
          code: 'snapshot-boundary-backwards',
          throughSequence: 1,
          previousThroughSequence: 4,
          previousVersion: 1,
          message:
            'Snapshot boundary 1 goes back below the boundary 4 of snapshot version 1: a boundary only advances.',
        });
        // A stale version is reported as such first: the writer must reload anyway.
        await expect(store.writeSnapshot(snapshotInput(0, 1))).rejects.toThrowError(VersionConflictError);
        expect(await fixture.storedSnapshots()).toEqual([{ version: 1, throughSequence: 4, messagesHash: 'hash-1' }]);
        expect((await store.loadContext()).tail.map((stored) => stored.sequence)).toEqual([5]);
        // The same boundary, or a later one, is accepted.
        expect(await store.writeSnapshot(snapshotInput(1, 4))).toMatchObject({ version: 2, throughSequence: 4 });
        expect(await store.writeSnapshot(snapshotInput(2, 5))).toMatchObject({ version: 3, throughSequence: 5 });
      });

      it('should let no boundary go back when writers race, each retrying on a version conflict', async () => {
        const fixture = await makeStore();
        const { store } = fixture;
        for (let index = 1; index <= 8; index++) await fixture.appendMessage(user(`u${index}`, `m${index}`));
        const boundaries = [5, 2, 7, 1, 4, 8, 3, 6, 2, 7];
        const outcomes = await Promise.all(
          boundaries.map(async (throughSequence, writer) => {
            for (;;) {
              const { currentVersion } = await store.loadContext();
              try {
                await store.writeSnapshot(snapshotInput(currentVersion, throughSequence, `writer-${writer}`));
                return 'written';
              } catch (error) {
                if (error instanceof SnapshotBoundaryError) return 'refused';
                if (!(error instanceof VersionConflictError)) throw error;
              }
            }
          }),
        );
        const stored = await fixture.storedSnapshots();
        expect(stored.map((snapshot) => snapshot.version)).toEqual(stored.map((_snapshot, index) => index + 1));
        for (let index = 1; index < stored.length; index++)
          expect(stored[index]!.throughSequence).toBeGreaterThanOrEqual(stored[index - 1]!.throughSequence);
        expect(stored.length).toBe(outcomes.filter((outcome) => outcome === 'written').length);
        // A refused writer's boundary was below one already stored.
        boundaries.forEach((throughSequence, writer) => {
          if (outcomes[writer] === 'refused')
            expect(throughSequence).toBeLessThan(Math.max(...stored.map((snapshot) => snapshot.throughSequence)));
        });
      });
    });

    describe('writeSummary', () => {
      it('should refuse an empty summary or a range outside the thread', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        await expect(store.writeSummary({ ...summaryInput(1, 2), content: ' ' })).rejects.toThrowError(
          InvalidArgumentError,
        );
        await expect(store.writeSummary(summaryInput(1, 9))).rejects.toThrowError(
          'Invalid summary.throughSequence 9: expected an integer from 1 to 3.',
        );
        expect(await fixture.storedSummaries()).toEqual([]);
      });
    });

    describe('after a redaction', () => {
      it('should return the newest valid summary and mark summaries and snapshots covering a redacted message stale', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        const older = await store.writeSummary(summaryInput(1, 1));
        const newer = await store.writeSummary(summaryInput(1, 2));
        await store.writeSnapshot({ ...snapshotInput(0, 2), summaryId: newer.id, includedSequences: [2, 3] });
        expect((await store.loadContext()).latestSummary?.id).toBe(newer.id);
        await fixture.redactMessage(2);
        const loaded = await store.loadContext();
        expect(loaded.latestSummary?.id).toBe(older.id);
        expect(loaded.snapshot).toBeNull();
        expect(loaded.currentVersion).toBe(1);
        expect(loaded.tail.find((message) => message.sequence === 2)).toMatchObject({ contextState: 'redacted' });
      });

      it('should refuse a summary read before a redaction of a covered message, or extending a summary made stale', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        const versionsOf = async () =>
          (await store.loadContext()).tail.map((message) => ({
            sequence: message.sequence,
            contentVersion: message.contentVersion ?? 1,
          }));
        const read = await versionsOf();
        const first = await store.writeSummary({ ...summaryInput(1, 2), sourceVersions: read });
        await fixture.redactMessage(2);
        await expect(store.writeSummary({ ...summaryInput(1, 3), sourceVersions: read })).rejects.toThrowError(
          'Stale summary source (message 2) version: expected 1, but the current version is 2.',
        );
        await expect(store.writeSummary({ ...summaryInput(1, 3), previousSummaryId: first.id })).rejects.toBeInstanceOf(
          VersionConflictError,
        );
        expect(await fixture.storedSummaries()).toHaveLength(1);
        const fresh = await store.writeSummary({ ...summaryInput(1, 3), sourceVersions: await versionsOf() });
        expect(fresh.stale).toBe(false);
      });

      it('should mark a snapshot stale when its boundary covers the message, and keep it when the message is in its tail', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        await store.writeSnapshot({ ...snapshotInput(0, 2), includedSequences: [1, 3] });
        await fixture.redactMessage(3);
        expect((await store.loadContext()).snapshot?.version).toBe(1);
        await fixture.redactMessage(2);
        const loaded = await store.loadContext();
        expect([loaded.snapshot, loaded.currentVersion]).toEqual([null, 1]);
      });
    });

    describe('contentVersion', () => {
      const versionsOf = async (store: ContextStore) =>
        (await store.loadContext()).tail.map((message) => ({
          sequence: message.sequence,
          contentVersion: message.contentVersion ?? 1,
        }));

      it('should rise by exactly one on a change of parts, not on the same parts, and refuse a summary read before', async () => {
        const fixture = await threeMessages();
        const { store } = fixture;
        const read = await versionsOf(store);
        // The same parts, as stored: not a change.
        await fixture.updateMessage(2, { parts: [{ type: 'text', text: 'u2' }] });
        expect(await versionsOf(store)).toEqual(read);
        await fixture.updateMessage(2, { parts: [{ type: 'text', text: 'u2, edited' }] });
        expect((await versionsOf(store)).map((source) => source.contentVersion)).toEqual([1, 2, 1]);
        await expect(store.writeSummary({ ...summaryInput(1, 3), sourceVersions: read })).rejects.toThrowError(
          'Stale summary source (message 2) version: expected 1, but the current version is 2.',
        );
        expect(await fixture.storedSummaries()).toEqual([]);
        const fresh = await store.writeSummary({ ...summaryInput(1, 3), sourceVersions: await versionsOf(store) });
        expect(fresh.stale).toBe(false);
        // The same value with its keys in another order is other stored text: a change.
        await fixture.updateMessage(2, { parts: [{ text: 'u2, edited', type: 'text' }] });
        expect((await versionsOf(store)).map((source) => source.contentVersion)).toEqual([1, 3, 1]);
      });

      // Any sequence of writes to two messages: parts changed, the same, or untouched, with an explicit version
      // lower, equal, higher or none. After each, a message's version is max(explicit, before + 1 if its parts
      // changed else before): strictly higher exactly when the parts changed, never lower.
      it('should rise exactly when parts change and never go down, over any sequence of writes', async () => {
        const change = fc.record({
          sequence: fc.constantFrom(1, 2),
          parts: fc.constantFrom('changed', 'same', 'untouched'),
          version: fc.oneof(
            fc.constant({ kind: 'none' as const, by: 0 }),
            fc.record({ kind: fc.constantFrom('lower' as const, 'equal' as const, 'higher' as const), by: fc.nat(3) }),
          ),
        });
        await fc.assert(
          fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 6 }), async (changes) => {
            const fixture = await makeStore();
            for (const id of ['u1', 'u2']) await fixture.appendMessage(user(id, id));
            const texts = ['u1', 'u2'];
            let expected = [1, 1];
            for (const [step, { sequence, parts, version }] of changes.entries()) {
              const before = expected[sequence - 1]!;
              if (parts === 'changed') texts[sequence - 1] = `${texts[sequence - 1]} / ${step}`;
              const explicit =
                version.kind === 'none'
                  ? undefined
                  : version.kind === 'lower'
                    ? Math.max(0, before - 1 - version.by)
                    : version.kind === 'equal'
                      ? before
                      : before + 1 + version.by;
              await fixture.updateMessage(sequence, {
                ...(parts === 'untouched' ? {} : { parts: [{ type: 'text', text: texts[sequence - 1]! }] }),
                ...(explicit === undefined ? {} : { contentVersion: explicit }),
              });
              const after = (await versionsOf(fixture.store)).map((source) => source.contentVersion);
              if (parts === 'changed') expect(after[sequence - 1]).toBeGreaterThan(before);
              else expect(after[sequence - 1]).toBeGreaterThanOrEqual(before);
              expected = expected.map((current, index) =>
                index === sequence - 1 ? Math.max(explicit ?? before, before + (parts === 'changed' ? 1 : 0)) : current,
              );
              expect(after).toEqual(expected);
            }
          }),
          { numRuns: 20 },
        );
      });
    });
  });
}
