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
});
