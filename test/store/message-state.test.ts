import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, NotFoundError } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { assistantMessage, userMessage } from '../support/fixtures.js';

type StateRow = {
  message_id: string;
  context_state: string;
  exclusion_reason: string | null;
  pinned: boolean;
  parts: unknown[];
};
type AuditRow = { action: string; actor: string; reason: string | null; message_id: string };

describe.each(BACKENDS)('message state on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** A thread with a question, a first answer, a regenerated answer and a follow-up. */
  async function threadWithRegenerate() {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await store.appendMessage(thread.id, userMessage('u-1', 'Name a colour'));
    await store.appendMessage(thread.id, assistantMessage('a-1', 'Red'));
    await store.appendMessage(thread.id, assistantMessage('a-1b', 'Blue'));
    await store.appendMessage(thread.id, userMessage('u-2', 'Why?'));
    return { store, thread };
  }

  const readStates = (threadId: string) =>
    database.admin.query<StateRow>(
      'select message_id, context_state, exclusion_reason, pinned, parts from agent_message where thread_id = $1 order by sequence',
      [threadId],
    );

  const readAudit = (threadId: string) =>
    database.admin.query<AuditRow>(
      `select e.action, e.actor, e.reason, m.message_id from agent_audit_event e
       join agent_message m on m.tenant_id = e.tenant_id and m.id = e.message_id
       where e.thread_id = $1 order by e.created_at, m.sequence`,
      [threadId],
    );

  describe('excludeMessages', () => {
    it('should exclude with a reason, audit actor and reason, and keep the history listed', async () => {
      const { store, thread } = await threadWithRegenerate();
      const excluded = await store.excludeMessages(thread.id, ['a-1'], {
        reason: 'superseded-by-regenerate',
        actor: 'user:42',
      });
      expect(excluded.map((stored) => [stored.message.id, stored.contextState, stored.exclusionReason])).toEqual([
        ['a-1', 'excluded', 'superseded-by-regenerate'],
      ]);
      expect(
        (await readStates(thread.id)).map((row) => [
          row.message_id,
          row.context_state,
          row.exclusion_reason,
          row.parts,
        ]),
      ).toEqual([
        ['u-1', 'eligible', null, [{ type: 'text', text: 'Name a colour' }]],
        ['a-1', 'excluded', 'superseded-by-regenerate', [{ type: 'text', text: 'Red' }]],
        ['a-1b', 'eligible', null, [{ type: 'text', text: 'Blue' }]],
        ['u-2', 'eligible', null, [{ type: 'text', text: 'Why?' }]],
      ]);
      expect(await readAudit(thread.id)).toEqual([
        { action: 'message-excluded', actor: 'user:42', reason: 'superseded-by-regenerate', message_id: 'a-1' },
      ]);

      const all = await store.listMessages(thread.id);
      expect(all.messages.map((stored) => [stored.message.id, stored.contextState])).toEqual([
        ['u-2', 'eligible'],
        ['a-1b', 'eligible'],
        ['a-1', 'excluded'],
        ['u-1', 'eligible'],
      ]);
      const eligible = await store.listMessages(thread.id, { onlyEligible: true });
      expect(eligible.messages.map((stored) => stored.message.id)).toEqual(['u-2', 'a-1b', 'u-1']);
    });

    it('should exclude several messages in one call, one audit event each', async () => {
      const { store, thread } = await threadWithRegenerate();
      await store.excludeMessages(thread.id, ['a-1b', 'u-2', 'a-1b'], { reason: 'superseded-by-edit' });
      expect((await readStates(thread.id)).map((row) => row.context_state)).toEqual([
        'eligible',
        'eligible',
        'excluded',
        'excluded',
      ]);
      expect(await readAudit(thread.id)).toEqual([
        { action: 'message-excluded', actor: 'system', reason: 'superseded-by-edit', message_id: 'a-1b' },
        { action: 'message-excluded', actor: 'system', reason: 'superseded-by-edit', message_id: 'u-2' },
      ]);
    });

    it('should change nothing when one id is unknown, and name it', async () => {
      const { store, thread } = await threadWithRegenerate();
      const error = await store
        .excludeMessages(thread.id, ['a-1', 'ghost'], { reason: 'superseded-by-edit' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect([(error as NotFoundError).entity, (error as NotFoundError).id, (error as NotFoundError).message]).toEqual([
        'message',
        'ghost',
        'The message "ghost" was not found.',
      ]);
      expect((await readStates(thread.id)).map((row) => row.context_state)).toEqual([
        'eligible',
        'eligible',
        'eligible',
        'eligible',
      ]);
      expect(await database.admin.query('select 1 from agent_audit_event where thread_id = $1', [thread.id])).toEqual(
        [],
      );
    });

    it('should refuse an empty reason or an empty id list with a typed error', async () => {
      const { store, thread } = await threadWithRegenerate();
      await expect(store.excludeMessages(thread.id, ['a-1'], { reason: '' })).rejects.toThrow(
        'Invalid reason "": expected a string of 1 to 500 characters.',
      );
      await expect(store.excludeMessages(thread.id, [], { reason: 'x' })).rejects.toThrow(InvalidArgumentError);
      await expect(store.excludeMessages(randomUUID(), ['a-1'], { reason: 'x' })).rejects.toThrow(NotFoundError);
      expect((await readStates(thread.id)).map((row) => row.context_state)).toEqual([
        'eligible',
        'eligible',
        'eligible',
        'eligible',
      ]);
    });

    it('should refuse to exclude a redacted message and leave it redacted', async () => {
      const { store, thread } = await threadWithRegenerate();
      await store.redactMessage(thread.id, 'a-1', { actor: 'admin', reason: 'pii' });
      await expect(store.excludeMessages(thread.id, ['a-1b', 'a-1'], { reason: 'x' })).rejects.toThrow(
        'Invalid messageIds "a-1": the message is redacted.',
      );
      await expect(store.includeMessages(thread.id, ['a-1'])).rejects.toThrow(InvalidArgumentError);
      expect((await readStates(thread.id)).map((row) => row.context_state)).toEqual([
        'eligible',
        'redacted',
        'eligible',
        'eligible',
      ]);
    });
  });

  describe('includeMessages', () => {
    it('should bring excluded messages back, clear the reason, and audit actor and reason', async () => {
      const { store, thread } = await threadWithRegenerate();
      await store.excludeMessages(thread.id, ['a-1'], { reason: 'superseded-by-regenerate', actor: 'user:42' });
      const included = await store.includeMessages(thread.id, ['a-1'], {
        actor: 'user:42',
        reason: 'restored-by-user',
      });
      expect(included.map((stored) => [stored.message.id, stored.contextState, stored.exclusionReason])).toEqual([
        ['a-1', 'eligible', null],
      ]);
      expect((await readStates(thread.id))[1]).toMatchObject({
        message_id: 'a-1',
        context_state: 'eligible',
        exclusion_reason: null,
      });
      expect(await readAudit(thread.id)).toEqual([
        { action: 'message-excluded', actor: 'user:42', reason: 'superseded-by-regenerate', message_id: 'a-1' },
        { action: 'message-included', actor: 'user:42', reason: 'restored-by-user', message_id: 'a-1' },
      ]);
      const eligible = await store.listMessages(thread.id, { onlyEligible: true });
      expect(eligible.messages.map((stored) => stored.message.id)).toEqual(['u-2', 'a-1b', 'a-1', 'u-1']);
    });

    it('should change nothing when one id is unknown', async () => {
      const { store, thread } = await threadWithRegenerate();
      await store.excludeMessages(thread.id, ['a-1', 'a-1b'], { reason: 'off-topic' });
      await expect(store.includeMessages(thread.id, ['a-1', 'ghost'])).rejects.toThrow(NotFoundError);
      expect((await readStates(thread.id)).map((row) => row.context_state)).toEqual([
        'eligible',
        'excluded',
        'excluded',
        'eligible',
      ]);
      expect((await readAudit(thread.id)).map((row) => row.action)).toEqual(['message-excluded', 'message-excluded']);
    });
  });

  describe('pinMessage', () => {
    it('should pin and unpin a message', async () => {
      const { store, thread } = await threadWithRegenerate();
      const pinned = await store.pinMessage(thread.id, 'u-1');
      expect([pinned.message.id, pinned.pinned]).toEqual(['u-1', true]);
      expect((await readStates(thread.id)).map((row) => row.pinned)).toEqual([true, false, false, false]);
      const unpinned = await store.unpinMessage(thread.id, 'u-1');
      expect(unpinned.pinned).toBe(false);
      expect((await readStates(thread.id)).map((row) => row.pinned)).toEqual([false, false, false, false]);
    });

    it('should raise NotFoundError for an unknown message or thread', async () => {
      const { store, thread } = await threadWithRegenerate();
      await expect(store.pinMessage(thread.id, 'ghost')).rejects.toThrow('The message "ghost" was not found.');
      await expect(store.pinMessage(randomUUID(), 'u-1')).rejects.toThrow(NotFoundError);
      expect((await readStates(thread.id)).map((row) => row.pinned)).toEqual([false, false, false, false]);
    });
  });
});
