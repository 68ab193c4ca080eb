import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const START = new Date('2030-01-01T00:00:00.000Z');
const LEASE_MS = 60_000;

describe.each(BACKENDS)('runs that end on %s', (backend) => {
  const database = useTestDatabase(backend);

  function clockedStore() {
    const clock = { now: START };
    const store = createAgentHistory({
      db: database.db,
      leaseMs: LEASE_MS,
      _internal: { now: () => clock.now },
    }).forTenant(randomUUID());
    return { store, clock };
  }

  const runRow = async (runId: string) =>
    (
      await database.admin.query<{ status: string; error: unknown; finished_at: Date | null }>(
        'select status, error, finished_at from agent_run where id = $1',
        [runId],
      )
    )[0]!;

  describe('recoverAbandonedMessages', () => {
    it('should end as failed the run of every message it marks failed, and leave live runs running', async () => {
      const { store, clock } = clockedStore();
      const thread = await store.createThread();
      const crashed = await store.startRun(thread.id);
      const live = await store.startRun(thread.id);
      await store.beginAssistantMessage(thread.id, { messageId: 'a-crashed', runId: crashed.id });
      clock.now = new Date(START.getTime() + 50_000);
      await store.beginAssistantMessage(thread.id, { messageId: 'a-live', runId: live.id });
      clock.now = new Date(START.getTime() + LEASE_MS + 1);

      const recovered = await store.recoverAbandonedMessages();

      expect(recovered.map((message) => message.message.id)).toEqual(['a-crashed']);
      expect(await runRow(crashed.id)).toMatchObject({
        status: 'failed',
        error: { name: 'AbandonedRun' },
        finished_at: expect.any(Date),
      });
      expect(await runRow(live.id)).toMatchObject({ status: 'running', finished_at: null });
    });

    it('should end a running run whose writer crashed with no live message once the lease has passed', async () => {
      const { store } = clockedStore();
      const thread = await store.createThread();
      const old = await store.startRun(thread.id);
      const finishedMessages = await store.startRun(thread.id);
      const fresh = await store.startRun(thread.id);
      await store.appendMessage(
        thread.id,
        { id: 'a-1', role: 'assistant', parts: [{ type: 'text', text: 'done' }] },
        { runId: finishedMessages.id },
      );
      // Their writer crashed long ago: before any message, and after its last one (by the database's clock).
      await database.admin.query(
        "update agent_run set started_at = now() - interval '1 hour' where id = any($1::uuid[])",
        [[old.id, finishedMessages.id]],
      );
      await database.admin.query(
        "update agent_message set updated_at = now() - interval '1 hour', created_at = now() - interval '1 hour' where message_id = 'a-1' and thread_id = $1",
        [thread.id],
      );

      expect(await store.recoverAbandonedMessages()).toEqual([]);

      expect((await runRow(old.id)).status).toBe('failed');
      expect((await runRow(finishedMessages.id)).status).toBe('failed');
      expect((await runRow(fresh.id)).status).toBe('running');
    });
  });

  describe('finishRun', () => {
    it('should store the finish reason, and fill in provider and model only where startRun left them empty', async () => {
      const { store } = clockedStore();
      const thread = await store.createThread();
      const named = await store.startRun(thread.id, { provider: 'openai', model: 'gpt-5' });
      const unnamed = await store.startRun(thread.id);
      const options = { status: 'completed', finishReason: 'stop', provider: 'mock', model: 'mock-1' } as const;
      expect(await store.finishRun(named.id, options)).toMatchObject({
        provider: 'openai',
        model: 'gpt-5',
        finishReason: 'stop',
      });
      expect(await store.finishRun(unnamed.id, options)).toMatchObject({
        provider: 'mock',
        model: 'mock-1',
        finishReason: 'stop',
      });
      await expect(
        store.finishRun(unnamed.id, { status: 'completed', finishReason: 'x'.repeat(201) }),
      ).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'options.finishReason' });
    });
  });

  describe('writeSnapshot', () => {
    it('should store the step number the snapshot was written for', async () => {
      const { store } = clockedStore();
      const thread = await store.createThread();
      await store.appendMessage(thread.id, { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] });
      const snapshot = { throughSequence: 0, includedSequences: [1], policyVersion: 'v', messagesHash: 'h' };
      const written = await store.writeSnapshot(thread.id, { ...snapshot, expectedVersion: 0, stepNumber: 3 });
      expect(written.stepNumber).toBe(3);
      expect((await store.loadContext(thread.id)).snapshot?.stepNumber).toBe(3);
      await expect(
        store.writeSnapshot(thread.id, { ...snapshot, expectedVersion: 1, stepNumber: -1 }),
      ).rejects.toMatchObject({ name: 'InvalidArgumentError', argument: 'snapshot.stepNumber' });
    });
  });
});
