import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';
import { TABLES } from '../support/tables.js';

describe.each(BACKENDS)('redactMessage across forks and runs on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** How many rows of any table, cast to text, contain `needle`. */
  async function residues(needle: string): Promise<Record<string, number>> {
    const found: Record<string, number> = {};
    for (const table of TABLES) {
      const [row] = await database.admin.query<{ count: string }>(
        `select count(*)::text as count from ${table} t where t::text like $1`,
        [`%${needle}%`],
      );
      if (Number(row!.count) > 0) found[table] = Number(row!.count);
    }
    return found;
  }

  it('should redact the copies a fork made, in the parent, the fork and the fork of the fork', async () => {
    const secret = `Fork${randomUUID().slice(0, 8)}Secret`;
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const parent = await store.createThread({ title: 'origin' });
    await store.appendMessage(parent.id, { id: 'm-1', role: 'user', parts: [text('hello')] });
    await store.appendMessage(parent.id, { id: 'm-2', role: 'user', parts: [text(`the code is ${secret}`)] });
    await store.appendMessage(parent.id, { id: 'm-3', role: 'user', parts: [text('after the secret')] });
    const fork = await store.forkThread(parent.id, { atSequence: 2 });
    const grandchild = await store.forkThread(fork.id, { atSequence: 2 });
    const unrelated = await store.createThread();
    await store.appendMessage(unrelated.id, {
      id: 'm-2',
      role: 'user',
      parts: [text('same id, other thread, no secret')],
    });
    expect(await residues(secret)).toEqual({ agent_message: 3 });

    // Redacting in the middle of the family reaches up and down.
    await store.redactMessage(fork.id, 'm-2', { actor: 'dpo', reason: 'gdpr request' });

    expect(await residues(secret)).toEqual({});
    const states = await database.admin.query<{ thread_id: string; context_state: string; content_version: number }>(
      "select thread_id, context_state, content_version from agent_message where message_id = 'm-2' order by created_at",
    );
    const byThread = Object.fromEntries(states.map((row) => [row.thread_id, [row.context_state, row.content_version]]));
    expect(byThread[parent.id]).toEqual(['redacted', 2]);
    expect(byThread[fork.id]).toEqual(['redacted', 2]);
    expect(byThread[grandchild.id]).toEqual(['redacted', 2]);
    expect(byThread[unrelated.id]).toEqual(['eligible', 1]);
    const audits = await database.admin.query<{ thread_id: string; details: { forkCopy: boolean } }>(
      "select thread_id, details from agent_audit_event where action = 'message-redacted' and thread_id = any($1::uuid[])",
      [[parent.id, fork.id, grandchild.id]],
    );
    expect(audits.map((audit) => [audit.thread_id, audit.details.forkCopy]).sort()).toEqual(
      [
        [parent.id, true],
        [fork.id, false],
        [grandchild.id, true],
      ].sort(),
    );
  });

  it("should scrub spans from the thread's runs, title and snapshot JSON as well", async () => {
    const secret = `Run${randomUUID().slice(0, 8)}Token`;
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({ title: `debugging ${secret}` });
    const run = await store.startRun(thread.id, { model: 'gpt-4o', metadata: { prompt: `use ${secret}` } });
    await store.appendMessage(
      thread.id,
      { id: 'm-1', role: 'user', parts: [text(`token ${secret}`)] },
      { runId: run.id },
    );
    await store.failRun(run.id, { error: new Error(`upstream rejected ${secret}`) });
    await store.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 1,
      includedSequences: [1],
      pruned: [{ note: `dropped ${secret}` }],
      budget: {},
      policyVersion: 'v1',
      messagesHash: 'h',
    });
    expect(Object.keys(await residues(secret)).sort()).toEqual([
      'agent_context_snapshot',
      'agent_message',
      'agent_run',
      'agent_thread',
    ]);

    await store.redactMessage(thread.id, 'm-1', { spans: [secret], actor: 'dpo', reason: 'leaked token' });

    expect(await residues(secret)).toEqual({});
    expect((await store.getThread(thread.id)).title).toBe('debugging [redacted]');
    expect((await store.getRun(run.id)).error).toEqual({ name: 'Error', message: 'upstream rejected [redacted]' });
  });

  /** P -> F1 -> F2 with the secret in P's title, metadata and message 2, a summary and a snapshot in F2 over it. */
  async function chainWithSecret(secret: string) {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const parent = await store.createThread({ title: `about ${secret}`, metadata: { topic: secret } });
    await store.appendMessage(parent.id, { id: 'm-1', role: 'user', parts: [text('hello')] });
    await store.appendMessage(parent.id, {
      id: 'm-2',
      role: 'user',
      parts: [text(`the code is ${secret}`), { type: 'data-card', data: { [secret]: 42 } }],
      metadata: { header: `Bearer ${secret}` },
    } as never);
    await store.appendMessage(parent.id, { id: 'm-3', role: 'assistant', parts: [text('noted')] });
    const middle = await store.forkThread(parent.id, { atSequence: 3 });
    const last = await store.forkThread(middle.id, { atSequence: 2 });
    await store.appendMessage(last.id, { id: 'm-3b', role: 'user', parts: [text('go on')] });
    await store.writeSummary(last.id, {
      fromSequence: 1,
      throughSequence: 2,
      content: `The user gave the code ${secret}.`,
      tokenCount: 7,
      policyVersion: 'v1',
    });
    await store.writeSnapshot(last.id, {
      expectedVersion: 0,
      throughSequence: 2,
      includedSequences: [3],
      pruned: { note: `preview of ${secret}` },
      budget: {},
      policyVersion: 'v1',
      messagesHash: 'h',
    });
    return { store, parent, middle, last };
  }

  describe.each([
    ['deleteThread', 'the parent'],
    ['deleteThread', 'the last fork'],
    ['retention', 'the parent'],
    ['retention', 'the last fork'],
  ] as const)('after the middle fork is deleted by %s, redacting in %s', (deletion, where) => {
    it('should leave the secret nowhere in the chain: title, parts, metadata, search index, summaries, snapshots', async () => {
      const secret = `Chain${randomUUID().slice(0, 8)}Key`;
      const { store, parent, middle, last } = await chainWithSecret(secret);
      if (deletion === 'deleteThread') await store.deleteThread(middle.id);
      else {
        await database.admin.query(
          "update agent_thread set last_message_at = now() - interval '400 days' where tenant_id = $1 and id = $2",
          [store.tenantId, middle.id],
        );
        expect(await store.deleteThreadsOlderThan({ olderThan: new Date(Date.now() - 300 * 86_400_000) })).toBe(1);
      }
      expect(Object.keys(await residues(secret)).sort()).toEqual([
        'agent_context_snapshot',
        'agent_message',
        'agent_summary',
        'agent_thread',
      ]);

      const target = where === 'the parent' ? parent.id : last.id;
      await store.redactMessage(target, 'm-2', { spans: [secret], actor: 'dpo', reason: 'leaked' });

      expect(await residues(secret)).toEqual({});
      expect(await store.searchMessages(secret)).toEqual([]);
      for (const threadId of [parent.id, last.id]) {
        const [copy] = (await store.listMessages(threadId, { limit: 5 })).messages.filter(
          (message) => message.message.id === 'm-2',
        );
        expect(copy!.contextState).toBe('redacted');
        expect(copy!.message.parts).toEqual([
          text('the code is [redacted]'),
          { type: 'data-card', data: { '[redacted]': 42 } },
        ]);
        expect((await store.getThread(threadId)).title).toBe('about [redacted]');
      }
      expect((await store.listSummaries(last.id)).map((summary) => summary.stale)).toEqual([true]);
    });
  });

  it('should not touch a message of the same id and sequence appended on its own in a sibling fork', async () => {
    const secret = `Sibling${randomUUID().slice(0, 8)}Key`;
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const parent = await store.createThread();
    await store.appendMessage(parent.id, { id: 'm-1', role: 'user', parts: [text('hello')] });
    await store.appendMessage(parent.id, { id: 'm-2', role: 'user', parts: [text('the parent says hi')] });
    const leaky = await store.forkThread(parent.id, { atSequence: 1 });
    const sibling = await store.forkThread(parent.id, { atSequence: 1 });
    await store.appendMessage(leaky.id, { id: 'm-2', role: 'user', parts: [text(`my key is ${secret}`)] });
    await store.appendMessage(sibling.id, { id: 'm-2', role: 'user', parts: [text('the sibling says hi')] });

    await store.redactMessage(leaky.id, 'm-2', { actor: 'dpo', reason: 'leaked' });

    expect(await residues(secret)).toEqual({});
    const rows = await database.admin.query<{ thread_id: string; context_state: string; text: string }>(
      "select thread_id, context_state, parts->0->>'text' as text from agent_message where tenant_id = $1 and message_id = 'm-2'",
      [store.tenantId],
    );
    const byThread = Object.fromEntries(rows.map((row) => [row.thread_id, [row.context_state, row.text]]));
    expect(byThread).toEqual({
      [parent.id]: ['eligible', 'the parent says hi'],
      [leaky.id]: ['redacted', '[redacted]'],
      [sibling.id]: ['eligible', 'the sibling says hi'],
    });
  });

  it('should match spans inside numbers, booleans and keys, in parts and metadata', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await store.appendMessage(thread.id, {
      id: 'm-1',
      role: 'user',
      parts: [text('my card'), { type: 'data-card', data: { number: 4111111111111111, cvc: 737, ok: true } }],
      metadata: { card: 4111111111111111, list: [17370, 'x'], '4111111111111111': 'as a key' },
    } as never);

    const redacted = await store.redactMessage(thread.id, 'm-1', {
      spans: ['4111111111111111', '737', 'true'],
      actor: 'dpo',
      reason: 'card number',
    });

    expect(redacted.message.parts).toEqual([
      text('my card'),
      { type: 'data-card', data: { number: '[redacted]', cvc: '[redacted]', ok: '[redacted]' } },
    ]);
    expect(redacted.message.metadata).toEqual({
      card: '[redacted]',
      list: ['1[redacted]0', 'x'],
      '[redacted]': 'as a key',
    });
    expect(await residues('4111111111111111')).toEqual({});
  });
});
