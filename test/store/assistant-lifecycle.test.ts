import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { countStoredMessageTokens, storedTokenCountId } from '../../src/tokens/count-stored-message-tokens.js';
import { createAgentHistory, InvalidArgumentError, loadO200kTokenCounter, NotFoundError } from '../../src/index.js';

// The store stores exactly what the context engine counts for a message, with the engine's counter id.
const tokenCounter = await loadO200kTokenCounter();
const engineCount = (parts: unknown[]) =>
  countStoredMessageTokens({ message: { id: 'a-1', role: 'assistant', parts } as never, tokenCounter });
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const START = new Date('2030-01-01T00:00:00.000Z');
const LEASE_MS = 60_000;
const at = (seconds: number) => new Date(START.getTime() + seconds * 1000);

const reasoning = { type: 'reasoning', text: 'The user greets me.', state: 'done' };
const partialParts = [{ type: 'step-start' }, { type: 'text', text: 'Hello, I am', state: 'streaming' }];
const fullParts = [
  { type: 'step-start' },
  reasoning,
  { type: 'text', text: 'Hello, I am your assistant.', state: 'done' },
];

type MessageRow = {
  status: string;
  parts: unknown[];
  metadata: Record<string, unknown>;
  lease_expires_at: Date | null;
  token_count: number | null;
  token_counter_id: string | null;
  completed_at: Date | null;
};

describe.each(BACKENDS)('assistant message lifecycle on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** A tenant store whose clock the test moves by hand. */
  function clockedStore(tenantId: string = randomUUID()) {
    const clock = { now: START };
    const store = createAgentHistory({
      db: database.db,
      leaseMs: LEASE_MS,
      _internal: { now: () => clock.now },
    }).forTenant(tenantId);
    return { store, clock };
  }

  async function readRow(threadId: string, messageId: string): Promise<MessageRow> {
    const rows = await database.admin.query<MessageRow>(
      `select status, parts, metadata, lease_expires_at, token_count, token_counter_id, completed_at
       from agent_message where thread_id = $1 and message_id = $2`,
      [threadId, messageId],
    );
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  it('should begin pending with a lease, checkpoint as streaming with a renewed lease, and finalize completed', async () => {
    const { store, clock } = clockedStore();
    const thread = await store.createThread();
    const begun = await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    expect([begun.created, begun.stored.sequence, begun.stored.status, begun.stored.message.parts]).toEqual([
      true,
      1,
      'pending',
      [],
    ]);
    expect(await readRow(thread.id, 'a-1')).toMatchObject({
      status: 'pending',
      parts: [],
      lease_expires_at: at(60),
      token_count: null,
      completed_at: null,
    });

    clock.now = at(10);
    const first = await store.checkpointMessage(thread.id, 'a-1', { parts: partialParts });
    expect([first.status, first.leaseExpiresAt]).toEqual(['streaming', at(70)]);
    expect(await readRow(thread.id, 'a-1')).toMatchObject({
      status: 'streaming',
      parts: partialParts,
      lease_expires_at: at(70),
    });

    clock.now = at(40);
    await store.checkpointMessage(thread.id, 'a-1', { parts: fullParts });
    expect(await readRow(thread.id, 'a-1')).toMatchObject({
      status: 'streaming',
      parts: fullParts,
      lease_expires_at: at(100),
    });

    const final = await store.finalizeMessage(thread.id, 'a-1', {
      status: 'completed',
      parts: fullParts,
      metadata: { model: 'gpt-4o' },
    });
    const expectedTokens = engineCount(fullParts);
    expect(expectedTokens).toBeGreaterThanOrEqual(
      tokenCounter.count('The user greets me.') + tokenCounter.count('Hello, I am your assistant.'),
    );
    expect([final.status, final.leaseExpiresAt, final.tokenCount, final.message.metadata]).toEqual([
      'completed',
      null,
      expectedTokens,
      { model: 'gpt-4o' },
    ]);
    const row = await readRow(thread.id, 'a-1');
    expect(row).toMatchObject({
      status: 'completed',
      parts: fullParts,
      lease_expires_at: null,
      token_count: expectedTokens,
      token_counter_id: storedTokenCountId(tokenCounter),
    });
    expect(row.completed_at).toBeInstanceOf(Date);
  });

  it('should return the stored message when begin is retried, never a second row', async () => {
    const { store } = clockedStore();
    const thread = await store.createThread();
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1', clientRequestId: 'req-1' });
    const retried = await store.beginAssistantMessage(thread.id, { messageId: 'a-1', clientRequestId: 'req-1' });
    expect([retried.created, retried.stored.sequence]).toEqual([false, 1]);
    expect(await database.admin.query('select 1 from agent_message where thread_id = $1', [thread.id])).toHaveLength(1);
  });

  it.each(['cancelled', 'failed'] as const)(
    'should keep the partial parts and count their tokens when %s',
    async (status) => {
      const { store } = clockedStore();
      const thread = await store.createThread();
      await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
      await store.checkpointMessage(thread.id, 'a-1', { parts: partialParts });
      const final = await store.finalizeMessage(thread.id, 'a-1', { status, parts: partialParts });
      expect(final.status).toBe(status);
      expect(await readRow(thread.id, 'a-1')).toMatchObject({
        status,
        parts: partialParts,
        lease_expires_at: null,
        token_count: engineCount(partialParts),
      });
    },
  );

  it('should return the stored message when finalize is retried with the same status', async () => {
    const { store } = clockedStore();
    const thread = await store.createThread();
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    const first = await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: fullParts });
    const retried = await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: partialParts });
    expect(retried).toEqual(first);
    expect(await readRow(thread.id, 'a-1')).toMatchObject({ status: 'completed', parts: fullParts });
  });

  it('should refuse a different final status, or a checkpoint, after the message is final, and change nothing', async () => {
    const { store } = clockedStore();
    const thread = await store.createThread();
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: fullParts });
    const before = await readRow(thread.id, 'a-1');

    const refinal = await store
      .finalizeMessage(thread.id, 'a-1', { status: 'cancelled', parts: partialParts })
      .catch((error: unknown) => error);
    expect(refinal).toBeInstanceOf(InvalidArgumentError);
    expect((refinal as InvalidArgumentError).message).toBe(
      'Invalid messageId "a-1": the message is completed; only a pending or streaming message can be finalized as cancelled.',
    );
    const checkpoint = await store
      .checkpointMessage(thread.id, 'a-1', { parts: partialParts })
      .catch((error: unknown) => error);
    expect(checkpoint).toBeInstanceOf(InvalidArgumentError);
    expect((checkpoint as InvalidArgumentError).message).toBe(
      'Invalid messageId "a-1": the message is completed; only a pending or streaming message can be checkpointed.',
    );
    expect(await readRow(thread.id, 'a-1')).toEqual(before);
  });

  it('should raise NotFoundError for a checkpoint or finalize of an unknown message', async () => {
    const { store } = clockedStore();
    const thread = await store.createThread();
    await expect(store.checkpointMessage(thread.id, 'nope', { parts: partialParts })).rejects.toThrow(NotFoundError);
    await expect(store.finalizeMessage(thread.id, 'nope', { status: 'completed', parts: [] })).rejects.toThrow(
      NotFoundError,
    );
    await expect(store.finalizeMessage(thread.id, 'nope', { status: 'done' as never, parts: [] })).rejects.toThrow(
      /Invalid status "done"/,
    );
  });

  it('should recover only expired pending or streaming messages as failed, keeping their checkpointed parts', async () => {
    const { store, clock } = clockedStore();
    const thread = await store.createThread();
    await store.beginAssistantMessage(thread.id, { messageId: 'pending-dead' }); // lease until 60
    await store.beginAssistantMessage(thread.id, { messageId: 'streaming-dead' });
    clock.now = at(20);
    await store.checkpointMessage(thread.id, 'streaming-dead', { parts: partialParts }); // lease until 80
    await store.appendMessage(thread.id, { id: 'done', role: 'assistant', parts: fullParts });
    clock.now = at(50);
    await store.beginAssistantMessage(thread.id, { messageId: 'alive' }); // lease until 110
    const { store: otherTenant } = clockedStore();
    const otherThread = await otherTenant.createThread();
    await otherTenant.beginAssistantMessage(otherThread.id, { messageId: 'foreign-dead' }); // lease until 60

    clock.now = at(59);
    expect(await store.recoverAbandonedMessages()).toEqual([]);
    clock.now = at(90);
    const recovered = await store.recoverAbandonedMessages();
    expect(
      recovered.map((stored) => [stored.message.id, stored.status, stored.message.parts, stored.leaseExpiresAt]),
    ).toEqual([
      ['pending-dead', 'failed', [], null],
      ['streaming-dead', 'failed', partialParts, null],
    ]);
    expect(await readRow(thread.id, 'streaming-dead')).toMatchObject({
      status: 'failed',
      parts: partialParts,
      lease_expires_at: null,
      metadata: { agentHistory: { failure: 'lease-expired' } },
    });
    expect((await readRow(thread.id, 'streaming-dead')).completed_at).toBeInstanceOf(Date);
    expect(await readRow(thread.id, 'alive')).toMatchObject({
      status: 'pending',
      parts: [],
      lease_expires_at: at(110),
    });
    expect(await readRow(thread.id, 'done')).toMatchObject({
      status: 'completed',
      parts: fullParts,
      lease_expires_at: null,
    });
    expect(await readRow(otherThread.id, 'foreign-dead')).toMatchObject({
      status: 'pending',
      lease_expires_at: at(60),
    });
    expect(await store.recoverAbandonedMessages()).toEqual([]);
  });
});
