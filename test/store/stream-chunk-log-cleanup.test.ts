import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { scanForResidue } from '../reliability/support/database-inspection.js';
import { text } from '../support/fixtures.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const LEASE_MS = 60_000;

// A chunk log holds an answer's text as it was sent: it must not outlive a redaction, nor the process that wrote it.
describe.each(BACKENDS)('the chunk log of an answer on %s', (backend) => {
  const database = useTestDatabase(backend);

  function clockedStore() {
    const clock = { shift: 0 };
    const store = createAgentHistory({
      db: database.db,
      leaseMs: LEASE_MS,
      _internal: { now: () => new Date(Date.now() + clock.shift) },
    }).forTenant(randomUUID());
    return { store, clock };
  }

  const logRows = async (tenantId: string) =>
    (
      await database.admin.query<{ message_id: string; batch: number }>(
        `select m.message_id, c.batch from agent_stream_chunk c
         join agent_message m on m.tenant_id = c.tenant_id and m.id = c.message_id
         where c.tenant_id = $1 order by m.message_id, c.batch`,
        [tenantId],
      )
    ).map((row) => `${row.message_id}:${row.batch}`);

  it('should drop the batches of an answer redacted while it streams, and leave the secret in no table', async () => {
    const secret = `Chunk${randomUUID().slice(0, 8)}Secret`;
    const { store } = clockedStore();
    const thread = await store.createThread({});
    await store.appendMessage(thread.id, { id: 'u1', role: 'user', parts: [text('tell me the key')] });
    await store.beginAssistantMessage(thread.id, { messageId: 'a1' });
    const delta = (batch: number) => [{ type: 'text-delta', id: 't', delta: `${secret} part ${batch}` }];
    await store.appendStreamChunks(thread.id, 'a1', { batch: 0, chunks: delta(0) });
    await store.checkpointMessage(thread.id, 'a1', { parts: [{ type: 'text', text: secret, state: 'streaming' }] });
    expect(await logRows(store.tenantId)).toEqual(['a1:0']);

    await store.redactMessage(thread.id, 'a1', { actor: 'dpo', reason: 'leaked' });
    // The stream goes on after the redaction: its batches are dropped, a retry of an old one too.
    await store.appendStreamChunks(thread.id, 'a1', { batch: 1, chunks: delta(1) });
    await store.appendStreamChunks(thread.id, 'a1', { batch: 0, chunks: delta(0) });
    await store.appendStreamChunks(thread.id, 'a1', { batch: 2, chunks: delta(2), final: true });

    expect(await logRows(store.tenantId)).toEqual([]);
    expect((await store.readStreamChunks(thread.id, 'a1')).batches).toEqual([]);
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
  });

  it('should delete, on recovery, the logs of the answers it ends and of answers that ended over a lease ago', async () => {
    const { store, clock } = clockedStore();
    const thread = await store.createThread({});
    const chunk = [{ type: 'text-delta', id: 't', delta: 'x' }];
    // a1: its writer died while it streamed. a2: it ended, but the writer died before it deleted the log.
    // a3: it ended a moment ago; a reader may still be replaying its log.
    for (const messageId of ['a1', 'a2', 'a3']) {
      await store.beginAssistantMessage(thread.id, { messageId });
      await store.appendStreamChunks(thread.id, messageId, { batch: 0, chunks: chunk });
    }
    await store.finalizeMessage(thread.id, 'a2', { status: 'completed', parts: [text('done')] });
    expect(await store.recoverAbandonedMessages()).toEqual([]);
    expect(await logRows(store.tenantId)).toEqual(['a1:0', 'a2:0', 'a3:0']);

    // a2 ended two leases ago by the database's clock, which writes completed_at (an old row).
    await database.admin.query(
      `update agent_message set completed_at = now() - interval '120 seconds' where tenant_id = $1 and message_id = 'a2'`,
      [store.tenantId],
    );
    await store.finalizeMessage(thread.id, 'a3', { status: 'completed', parts: [text('done')] });
    // a1's lease expired by the store's clock.
    clock.shift = 2 * LEASE_MS;
    const recovered = await store.recoverAbandonedMessages();

    expect(recovered.map((message) => message.message.id)).toEqual(['a1']);
    expect(await logRows(store.tenantId)).toEqual(['a3:0']);
  });
});
