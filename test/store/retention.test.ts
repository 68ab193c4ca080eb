import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, type TenantHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const CUT_OFF = new Date('2025-01-01T00:00:00.000Z');
const OLD = '2024-06-01T00:00:00.000Z';
const CHILD_TABLES = ['agent_run', 'agent_message', 'agent_summary', 'agent_context_snapshot'] as const;

describe.each(BACKENDS)('deleteThreadsOlderThan on %s', (backend) => {
  const database = useTestDatabase(backend);

  const newStore = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());

  /** A thread with a run, a user message, the run's answer, a summary and a snapshot; its last activity set to `lastMessageAt`. */
  async function fullThread(store: TenantHistory, lastMessageAt?: string) {
    const thread = await store.createThread({ userId: 'alice', title: 'Trip' });
    const run = await store.startRun(thread.id, { model: 'gpt-4o' });
    await store.appendMessage(thread.id, { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Plan a trip' }] });
    await store.appendMessage(
      thread.id,
      { id: 'a-1', role: 'assistant', parts: [{ type: 'text', text: 'Sure.' }] },
      { runId: run.id },
    );
    await store.finishRun(run.id, { status: 'completed', usage: { inputTokens: 10, outputTokens: 2 } });
    const summary = await store.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: 2,
      content: 'A trip.',
      tokenCount: 3,
      policyVersion: 'p1',
    });
    await store.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 2,
      summaryId: summary.id,
      includedSequences: [1, 2],
      policyVersion: 'p1',
      messagesHash: 'h',
    });
    if (lastMessageAt !== undefined)
      await database.admin.query('update agent_thread set last_message_at = $2 where id = $1', [
        thread.id,
        lastMessageAt,
      ]);
    return thread.id;
  }

  /** How many rows each table holds for these threads. */
  async function countRows(threadIds: string[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of ['agent_thread', ...CHILD_TABLES]) {
      const column = table === 'agent_thread' ? 'id' : 'thread_id';
      const [row] = await database.admin.query<{ count: string }>(
        `select count(*)::text as count from ${table} where ${column} = any($1::uuid[])`,
        [threadIds],
      );
      counts[table] = Number(row!.count);
    }
    return counts;
  }

  const expiredBatches = (tenantId: string) =>
    database.admin.query<{ actor: string; details: { threadIds: string[]; olderThan: string } }>(
      "select actor, details from agent_audit_event where tenant_id = $1 and action = 'threads-expired' order by created_at",
      [tenantId],
    );

  it('should delete old threads whole, in batches, and leave newer threads and other tenants alone', async () => {
    const store = newStore();
    const other = newStore();
    const oldIds: string[] = [];
    for (let index = 0; index < 5; index++) oldIds.push(await fullThread(store, OLD));
    await store.softDeleteThread(oldIds[4]!);
    const newIds = [await fullThread(store), await fullThread(store, CUT_OFF.toISOString())];
    const otherIds = [await fullThread(other, OLD), await fullThread(other, OLD)];
    const full = { agent_thread: 1, agent_run: 1, agent_message: 2, agent_summary: 1, agent_context_snapshot: 1 };
    const times = (count: number) =>
      Object.fromEntries(Object.entries(full).map(([table, rows]) => [table, rows * count]));
    expect(await countRows(oldIds)).toEqual(times(5));

    expect(await store.deleteThreadsOlderThan({ olderThan: CUT_OFF, batchSize: 2 })).toBe(5);

    expect(await countRows(oldIds)).toEqual(times(0));
    expect(await countRows(newIds)).toEqual(times(2));
    expect(await countRows(otherIds)).toEqual(times(2));
    expect((await store.listMessages(newIds[1]!)).messages.map((stored) => stored.message.id)).toEqual(['a-1', 'u-1']);
    const batches = await expiredBatches(store.tenantId);
    expect(batches.map((event) => [event.actor, event.details.threadIds.length, event.details.olderThan])).toEqual([
      ['retention', 2, CUT_OFF.toISOString()],
      ['retention', 2, CUT_OFF.toISOString()],
      ['retention', 1, CUT_OFF.toISOString()],
    ]);
    expect(batches.flatMap((event) => event.details.threadIds).sort()).toEqual([...oldIds].sort());
    expect(await store.deleteThreadsOlderThan({ olderThan: CUT_OFF, batchSize: 2 })).toBe(0);
  });

  it('should leave no orphan row anywhere in the database', async () => {
    const store = newStore();
    for (let index = 0; index < 3; index++) await fullThread(store, OLD);
    expect(await store.deleteThreadsOlderThan({ olderThan: CUT_OFF })).toBe(3);
    for (const table of CHILD_TABLES) {
      const orphans = await database.admin.query(
        `select 1 from ${table} c where not exists (select 1 from agent_thread t where t.tenant_id = c.tenant_id and t.id = c.thread_id)`,
      );
      expect([table, orphans.length]).toEqual([table, 0]);
    }
    const messagesWithoutRun = await database.admin.query(
      'select 1 from agent_message m where m.run_id is not null and not exists (select 1 from agent_run r where r.tenant_id = m.tenant_id and r.id = m.run_id)',
    );
    expect(messagesWithoutRun).toEqual([]);
  });

  it('should stop after an exactly full last batch', async () => {
    const store = newStore();
    const oldIds = [
      await fullThread(store, OLD),
      await fullThread(store, OLD),
      await fullThread(store, OLD),
      await fullThread(store, OLD),
    ];
    expect(await store.deleteThreadsOlderThan({ olderThan: CUT_OFF, batchSize: 2 })).toBe(4);
    expect((await countRows(oldIds)).agent_thread).toBe(0);
    expect((await expiredBatches(store.tenantId)).map((event) => event.details.threadIds.length)).toEqual([2, 2]);
  });

  it('should reject a bad cut-off or batch size and delete nothing', async () => {
    const store = newStore();
    const oldId = await fullThread(store, OLD);
    await expect(store.deleteThreadsOlderThan({ olderThan: new Date('nope') })).rejects.toThrow(InvalidArgumentError);
    await expect(store.deleteThreadsOlderThan({ olderThan: '2025-01-01' as never })).rejects.toThrow(
      'Invalid options.olderThan "2025-01-01": expected a valid Date.',
    );
    await expect(store.deleteThreadsOlderThan({ olderThan: CUT_OFF, batchSize: 0 })).rejects.toThrow(
      'Invalid options.batchSize 0: expected an integer from 1 to 10000.',
    );
    expect((await countRows([oldId])).agent_message).toBe(2);
  });
});
