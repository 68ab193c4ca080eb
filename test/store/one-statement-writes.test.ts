import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Logger } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  SnapshotBoundaryError,
  VersionConflictError,
  type TenantHistory,
} from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

/** Text that tries to end a literal early or be read as an escape, a quote or a parameter. */
const hostileText = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc
    .array(fc.constantFrom('$', 'a', "'", '\\', '"', '$a$', '$1', '--', ';', '\n', '\u2028', 'é', '😀', '\\u0000'), {
      maxLength: 12,
    })
    .map((pieces) => pieces.join('')),
);

/** What differs between two runs of the same writes: ids and times. */
function comparable(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, field: unknown) =>
      ['id', 'rowId', 'threadId', 'runId', 'summaryId'].includes(key) ||
      key.endsWith('At') ||
      (typeof field === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(field))
        ? '<varies>'
        : field,
    ),
  );
}

describe.each(BACKENDS)('the one-statement writes on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** The store's database through a Drizzle logger that records every statement Drizzle sends. */
  const recordingDatabase = () => {
    const sent: Array<{ query: string; params: unknown[] }> = [];
    const logger: Logger = { logQuery: (query, params) => void sent.push({ query, params }) };
    const client = (database.db as unknown as { $client: never }).$client;
    const db = (backend === 'pglite'
      ? drizzlePglite({ client, logger })
      : drizzlePostgres({ client, logger })) as unknown as AgentHistoryDatabase;
    return { sent, db };
  };

  /** One turn's writes after the user message: every result, in order. */
  async function turn(store: TenantHistory, thread: string, text: string, metadata: Record<string, string>) {
    const results: unknown[] = [await store.getThread(thread)];
    const run = await store.startRun(thread, { provider: text.slice(0, 200), metadata });
    results.push(run);
    const messageId = `answer-${randomUUID()}`;
    await store.beginAssistantMessage(thread, { messageId, runId: run.id });
    results.push(await store.checkpointMessage(thread, messageId, { parts: [{ type: 'text', text }] }));
    results.push(
      await store.checkpointMessage(thread, messageId, {
        parts: [{ type: 'text', text: `${text}${text}` }],
        metadata: { ...metadata, step: text },
      }),
    );
    results.push(
      await store.finalizeMessage(thread, messageId, {
        status: 'completed',
        parts: [
          { type: 'text', text },
          { type: 'text', text: 'done' },
        ],
      }),
    );
    results.push(
      await store.finishRun(run.id, {
        status: 'completed',
        usage: { inputTokens: 7, outputTokens: text.length },
        finishReason: text.slice(0, 200),
        model: text.slice(0, 200),
      }),
    );
    results.push(
      await store.writeSnapshot(thread, {
        expectedVersion: 0,
        throughSequence: 2,
        includedSequences: [1, 2],
        pruned: [{ note: text }],
        budget: { text },
        policyVersion: text || 'v',
        messagesHash: `h${text}`,
        stepNumber: 1,
      }),
    );
    results.push(await store.getMessage(thread, messageId));
    return results;
  }

  it('should write what the transactional writes write, for any text, each in one statement', async () => {
    const { sent, db } = recordingDatabase();
    const tenantId = randomUUID();
    const fast = createAgentHistory({ db, appendBatching: false }).forTenant(tenantId, { userId: 'u1' });
    await fast.createThread();
    await fc.assert(
      fc.asyncProperty(hostileText, fc.dictionary(hostileText, hostileText, { maxKeys: 3 }), async (text, metadata) => {
        const [one, other] = [await fast.createThread(), await fast.createThread()];
        for (const id of [one.id, other.id])
          await fast.appendMessage(id, { id: `user-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text }] });
        sent.length = 0;
        const written = await turn(fast, one.id, text, metadata);
        // getThread, startRun, two checkpoints, finalize, finishRun, writeSnapshot: one statement each, no parameters.
        const writes = sent.filter(
          (statement) => !/agent_history_append_message|agent_history_list/.test(statement.query),
        );
        const functions = writes.map((statement) => /agent_history_\w+/.exec(statement.query)?.[0]);
        expect(functions.slice(0, 7)).toEqual([
          'agent_history_get_thread',
          'agent_history_start_run',
          'agent_history_write_answer',
          'agent_history_write_answer',
          'agent_history_write_answer',
          'agent_history_finish_run',
          'agent_history_write_snapshot',
        ]);
        expect(writes.slice(0, 7).every((statement) => statement.params.length === 0)).toBe(true);
        // The same writes in the caller's transaction take the transactional path.
        const inTransaction = await database.db.transaction((tx) =>
          turn(createAgentHistory({ db: tx }).forTenant(tenantId, { userId: 'u1' }), other.id, text, metadata),
        );
        expect(comparable(written)).toEqual(comparable(inTransaction));
      }),
      { numRuns: backend === 'pglite' ? 8 : 25 },
    );
  });

  it('should refuse in one statement what the transactional writes refuse, with the same errors, and write nothing', async () => {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId, { userId: 'u1' });
    const otherUser = createAgentHistory({ db: database.db }).forTenant(tenantId, { userId: 'u2' });
    const otherTenant = createAgentHistory({ db: database.db }).forTenant(randomUUID(), { userId: 'u1' });
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'q', role: 'user', parts: [{ type: 'text', text: 'q' }] });
    const run = await store.startRun(thread);
    await store.beginAssistantMessage(thread, { messageId: 'a', runId: run.id });

    // Another user's or tenant's store sees no thread, no run and no message.
    for (const stranger of [otherUser, otherTenant]) {
      await expect(stranger.getThread(thread)).rejects.toBeInstanceOf(NotFoundError);
      await expect(stranger.startRun(thread)).rejects.toBeInstanceOf(NotFoundError);
      await expect(stranger.finishRun(run.id, { status: 'failed' })).rejects.toBeInstanceOf(NotFoundError);
      await expect(stranger.checkpointMessage(thread, 'a', { parts: [] })).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        stranger.writeSnapshot(thread, {
          expectedVersion: 0,
          throughSequence: 1,
          includedSequences: [1],
          policyVersion: 'v',
          messagesHash: 'h',
        }),
      ).rejects.toBeInstanceOf(NotFoundError);
    }
    expect((await store.getRun(run.id)).status).toBe('running');
    expect((await store.getMessage(thread, 'a')).status).toBe('pending');

    // A finished message takes no checkpoint; a finalize retried with the same status returns it.
    const final = await store.finalizeMessage(thread, 'a', { status: 'cancelled', parts: [] });
    await expect(store.checkpointMessage(thread, 'a', { parts: [] })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await store.finalizeMessage(thread, 'a', { status: 'cancelled', parts: [] })).toEqual(final);
    await expect(store.finalizeMessage(thread, 'a', { status: 'completed', parts: [] })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );

    // A finished run comes back unchanged.
    const finished = await store.finishRun(run.id, { status: 'cancelled' });
    expect(await store.finishRun(run.id, { status: 'completed', usage: { inputTokens: 1 } })).toEqual(finished);

    // Snapshots: a stale version, a boundary past the thread or below the previous snapshot's, a foreign summary.
    const snapshot = { includedSequences: [1], policyVersion: 'v', messagesHash: 'h' };
    await store.writeSnapshot(thread, { ...snapshot, expectedVersion: 0, throughSequence: 2 });
    await expect(
      store.writeSnapshot(thread, { ...snapshot, expectedVersion: 0, throughSequence: 2 }),
    ).rejects.toBeInstanceOf(VersionConflictError);
    await expect(
      store.writeSnapshot(thread, { ...snapshot, expectedVersion: 1, throughSequence: 1 }),
    ).rejects.toBeInstanceOf(SnapshotBoundaryError);
    await expect(store.writeSnapshot(thread, { ...snapshot, expectedVersion: 1, throughSequence: 3 })).rejects.toThrow(
      /throughSequence/,
    );
    await expect(
      store.writeSnapshot(thread, { ...snapshot, expectedVersion: 1, throughSequence: 2, summaryId: randomUUID() }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect((await store.loadContext(thread)).snapshot?.version).toBe(1);
  });

  it('should end the answer and its run in one statement, and refuse a run of another thread or a bad usage whole', async () => {
    const { sent, db } = recordingDatabase();
    const store = createAgentHistory({ db, appendBatching: false }).forTenant(randomUUID());
    const [thread, other] = [(await store.createThread()).id, (await store.createThread()).id];
    const begin = async (id: string) => {
      const run = await store.startRun(id);
      await store.beginAssistantMessage(id, { messageId: `m-${run.id}`, runId: run.id });
      return { run: run.id, message: `m-${run.id}` };
    };
    const turn = await begin(thread);
    const foreign = await begin(other);
    const parts = [{ type: 'text' as const, text: 'the answer' }];

    // The run of another thread: nothing is written, not the message either.
    await expect(
      store.finalizeMessage(thread, turn.message, { status: 'completed', parts, finishRun: { runId: foreign.run } }),
    ).rejects.toBeInstanceOf(NotFoundError);
    // A usage the run refuses is named, before anything is written.
    await expect(
      store.finalizeMessage(thread, turn.message, {
        status: 'completed',
        parts,
        finishRun: { runId: turn.run, usage: { inputTokens: -1 } },
      }),
    ).rejects.toThrow(/options\.finishRun\.usage\.inputTokens/);
    expect((await store.getMessage(thread, turn.message)).status).toBe('pending');
    expect((await store.getRun(turn.run)).status).toBe('running');
    expect((await store.getRun(foreign.run)).status).toBe('running');

    sent.length = 0;
    const stored = await store.finalizeMessage(thread, turn.message, {
      status: 'cancelled',
      parts,
      finishRun: {
        runId: turn.run,
        usage: { inputTokens: 3, outputTokens: 2 },
        error: { message: 'stop' },
        model: 'm',
      },
    });
    expect(sent.map((statement) => /agent_history_\w+/.exec(statement.query)?.[0])).toEqual([
      'agent_history_write_answer',
    ]);
    expect(stored.status).toBe('cancelled');
    const run = await store.getRun(turn.run);
    expect(run).toMatchObject({
      status: 'cancelled',
      inputTokens: 3,
      outputTokens: 2,
      error: { message: 'stop' },
      model: 'm',
    });
    expect(run.finishedAt).not.toBeNull();
    // A retried finalize with the same status leaves the run as it was.
    await store.finalizeMessage(thread, turn.message, {
      status: 'cancelled',
      parts,
      finishRun: { runId: turn.run, usage: { inputTokens: 99 } },
    });
    expect(await store.getRun(turn.run)).toEqual(run);
  });
});
