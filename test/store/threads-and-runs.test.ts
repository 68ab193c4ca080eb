import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  withTenant,
  type StoredThread,
  type TenantHistory,
} from '../../src/index.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { assistantMessage, userMessage } from '../support/fixtures.js';

const APP_ROLE = 'agent_history_app';
const CHILD_TABLES = ['agent_run', 'agent_message', 'agent_summary', 'agent_context_snapshot'] as const;

/** Every page of `listThreads`, following the cursors. */
async function allPages(tenant: TenantHistory, options: { userId?: string; limit: number }) {
  const pages: StoredThread[][] = [];
  let cursor: string | undefined;
  do {
    const page = await tenant.listThreads({ ...options, cursor });
    pages.push(page.threads);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 20);
  return pages;
}

describe.each(BACKENDS)('threads and runs on %s', (backend) => {
  const database = useTestDatabase(backend);

  const store = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());
  const childCounts = async (threadId: string) => {
    const counts: Record<string, number> = {};
    for (const table of CHILD_TABLES) {
      const [row] = await database.admin.query<{ n: string }>(
        `select count(*) as n from ${table} where thread_id = $1`,
        [threadId],
      );
      counts[table] = Number(row!.n);
    }
    return counts;
  };

  describe('createThread / getThread', () => {
    it('should store the owner, title and metadata and read them back', async () => {
      const tenant = store();
      const id = randomUUID();
      const created = await tenant.createThread({ id, userId: 'u1', title: 'Trip', metadata: { topic: 'travel' } });
      expect(created).toMatchObject({
        id,
        userId: 'u1',
        title: 'Trip',
        metadata: { topic: 'travel' },
        messageCount: 0,
        parentThreadId: null,
        deletedAt: null,
      });
      expect(await tenant.getThread(id)).toEqual(created);
      const [row] = await database.admin.query(
        'select tenant_id, user_id, title, next_sequence::int as next from agent_thread where id = $1',
        [id],
      );
      expect(row).toEqual({ tenant_id: tenant.tenantId, user_id: 'u1', title: 'Trip', next: 0 });
      await expect(tenant.getThread(randomUUID())).rejects.toThrow(NotFoundError);
    });
  });

  describe('listThreads', () => {
    it('should page newest activity first across 3 pages with no duplicate and no skip, per user', async () => {
      const tenant = store();
      const mine: string[] = [];
      for (let index = 0; index < 7; index++) {
        mine.push((await tenant.createThread({ userId: 'u1', title: `t${index}` })).id);
        await tenant.createThread({ userId: 'u2' });
      }
      // New activity moves the oldest thread to the top.
      await tenant.appendMessage(mine[0]!, userMessage('m', 'hello'));
      const expected = await database.admin.query<{ id: string }>(
        `select id from agent_thread where tenant_id = $1 and user_id = 'u1' order by last_message_at desc, id desc`,
        [tenant.tenantId],
      );
      expect(expected[0]!.id).toBe(mine[0]);
      const pages = await allPages(tenant, { userId: 'u1', limit: 3 });
      expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
      expect(pages.flat().map((thread) => thread.id)).toEqual(expected.map((row) => row.id));
      const everyone = await allPages(tenant, { limit: 5 });
      expect(everyone.map((page) => page.length)).toEqual([5, 5, 4]);
      const everyoneExpected = await database.admin.query<{ id: string }>(
        `select id from agent_thread where tenant_id = $1 order by last_message_at desc, id desc`,
        [tenant.tenantId],
      );
      expect(everyone.flat().map((thread) => thread.id)).toEqual(everyoneExpected.map((row) => row.id));
      expect(everyoneExpected).toHaveLength(14);
    });

    it('should not skip threads whose last activity differs by microseconds only', async () => {
      const tenant = store();
      const ids = [];
      for (let index = 0; index < 4; index++) ids.push((await tenant.createThread({ userId: 'same-ms' })).id);
      // Four activity times inside one millisecond: a cursor rounded to milliseconds would skip three of them.
      for (const [index, id] of ids.entries()) {
        await database.admin.query(
          `update agent_thread set last_message_at = '2030-01-01 00:00:00.123456+00'::timestamptz - $2 * interval '1 microsecond' where id = $1`,
          [id, index * 100],
        );
      }
      const pages = await allPages(tenant, { userId: 'same-ms', limit: 1 });
      expect(pages.flat().map((thread) => thread.id)).toEqual(ids);
    });

    it('should reject a cursor it did not issue, naming it', async () => {
      await expect(store().listThreads({ cursor: 'garbage' })).rejects.toThrow(
        'Invalid options.cursor "garbage": not a cursor returned by listThreads.',
      );
    });
  });

  describe('renameThread', () => {
    it('should change the title (or clear it) and bump updated_at', async () => {
      const tenant = store();
      const thread = await tenant.createThread({ title: 'Old' });
      const renamed = await tenant.renameThread(thread.id, { title: 'New' });
      expect(renamed.title).toBe('New');
      expect(renamed.updatedAt.getTime()).toBeGreaterThanOrEqual(thread.updatedAt.getTime());
      expect((await tenant.renameThread(thread.id, { title: null })).title).toBeNull();
      const [row] = await database.admin.query('select title from agent_thread where id = $1', [thread.id]);
      expect(row).toEqual({ title: null });
      await expect(tenant.renameThread(randomUUID(), { title: 'x' })).rejects.toThrow(NotFoundError);
    });
  });

  describe('softDeleteThread', () => {
    it('should hide the thread from get and list, refuse appends, keep the rows and audit it', async () => {
      const tenant = store();
      const thread = await tenant.createThread({ userId: 'soft' });
      await tenant.appendMessage(thread.id, userMessage('m1', 'keep me'));
      await tenant.softDeleteThread(thread.id, { actor: 'admin', reason: 'user asked' });
      await expect(tenant.getThread(thread.id)).rejects.toThrow(NotFoundError);
      expect((await tenant.listThreads({ userId: 'soft' })).threads).toEqual([]);
      await expect(tenant.appendMessage(thread.id, userMessage('m2', 'more'))).rejects.toThrow(NotFoundError);
      await expect(tenant.softDeleteThread(thread.id)).rejects.toThrow(NotFoundError);
      const rows = await database.admin.query<{ deleted: boolean; next: number }>(
        'select deleted_at is not null as deleted, next_sequence::int as next from agent_thread where id = $1',
        [thread.id],
      );
      expect(rows).toEqual([{ deleted: true, next: 1 }]);
      expect(await childCounts(thread.id)).toMatchObject({ agent_message: 1 });
      const audit = await database.admin.query(
        'select action, actor, reason from agent_audit_event where thread_id = $1',
        [thread.id],
      );
      expect(audit).toEqual([{ action: 'thread-soft-deleted', actor: 'admin', reason: 'user asked' }]);
    });
  });

  describe('deleteThread', () => {
    it('should cascade to runs, messages, summaries and snapshots, leaving no orphan and keeping the audit trail', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const keep = await tenant.createThread();
      for (const target of [thread, keep]) {
        const run = await tenant.startRun(target.id, { model: 'm' });
        await tenant.appendMessage(target.id, userMessage('u1', 'hi'));
        await tenant.appendMessage(target.id, assistantMessage('a1', 'hello'), { runId: run.id });
        await tenant.excludeMessages(target.id, ['u1'], { reason: 'off-topic' });
        const summary = await tenant.writeSummary(target.id, {
          fromSequence: 1,
          throughSequence: 2,
          content: 'greeting',
          tokenCount: 1,
          policyVersion: 'p1',
        });
        await tenant.writeSnapshot(target.id, {
          expectedVersion: 0,
          throughSequence: 2,
          summaryId: summary.id,
          includedSequences: [],
          policyVersion: 'p1',
          messagesHash: 'h',
        });
      }
      expect(await childCounts(thread.id)).toEqual({
        agent_run: 1,
        agent_message: 2,
        agent_summary: 1,
        agent_context_snapshot: 1,
      });
      await tenant.deleteThread(thread.id, { actor: 'admin', reason: 'gdpr' });
      expect(await childCounts(thread.id)).toEqual({
        agent_run: 0,
        agent_message: 0,
        agent_summary: 0,
        agent_context_snapshot: 0,
      });
      expect(await database.admin.query('select 1 from agent_thread where id = $1', [thread.id])).toEqual([]);
      expect(await childCounts(keep.id)).toEqual({
        agent_run: 1,
        agent_message: 2,
        agent_summary: 1,
        agent_context_snapshot: 1,
      });
      const audit = await database.admin.query(
        'select action, actor, reason from agent_audit_event where thread_id = $1 order by created_at, action',
        [thread.id],
      );
      expect(audit).toEqual([
        { action: 'message-excluded', actor: 'system', reason: 'off-topic' },
        { action: 'thread-deleted', actor: 'admin', reason: 'gdpr' },
      ]);
      await expect(tenant.deleteThread(thread.id)).rejects.toThrow(NotFoundError);
    });

    it('should delete a soft-deleted thread too', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      await tenant.appendMessage(thread.id, userMessage('u1', 'hi'));
      await tenant.softDeleteThread(thread.id);
      await tenant.deleteThread(thread.id);
      expect(await childCounts(thread.id)).toMatchObject({ agent_message: 0 });
      expect(await database.admin.query('select 1 from agent_thread where id = $1', [thread.id])).toEqual([]);
    });
  });

  describe('forkThread', () => {
    it('should refuse a fork point outside 0..count, naming the value, and write nothing', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      for (const index of [1, 2, 3]) await tenant.appendMessage(thread.id, userMessage(`m${index}`, 'x'));
      for (const atSequence of [-1, 4, 1.5]) {
        const error = await tenant.forkThread(thread.id, { atSequence }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).message).toBe(
          `Invalid options.atSequence ${atSequence}: expected an integer from 0 to 3.`,
        );
        expect((error as InvalidArgumentError).value).toBe(atSequence);
      }
      const [row] = await database.admin.query<{ n: string }>(
        'select count(*) as n from agent_thread where tenant_id = $1',
        [tenant.tenantId],
      );
      expect(Number(row!.n)).toBe(1);
      await expect(tenant.forkThread(randomUUID(), { atSequence: 0 })).rejects.toThrow(NotFoundError);
    });

    it('should fork at 0 and at count, continuing the sequence after the fork point', async () => {
      const tenant = store();
      const thread = await tenant.createThread({ title: 'Source', userId: 'u1' });
      for (const index of [1, 2]) await tenant.appendMessage(thread.id, userMessage(`m${index}`, 'x'));
      const empty = await tenant.forkThread(thread.id, { atSequence: 0 });
      const full = await tenant.forkThread(thread.id, { atSequence: 2, title: 'Copy' });
      expect([empty.messageCount, empty.parentThreadId, empty.forkedAtSequence, empty.title, empty.userId]).toEqual([
        0,
        thread.id,
        0,
        'Source',
        'u1',
      ]);
      expect([full.messageCount, full.forkedAtSequence, full.title]).toEqual([2, 2, 'Copy']);
      expect((await tenant.appendMessage(full.id, userMessage('m3', 'next'))).stored.sequence).toBe(3);
      expect((await tenant.appendMessage(empty.id, userMessage('m1', 'again'))).stored.sequence).toBe(1);
      expect((await tenant.getThread(thread.id)).messageCount).toBe(2);
    });
  });

  describe('runs', () => {
    it('should start a run, then finish it once with its usage', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const run = await tenant.startRun(thread.id, { provider: 'openai', model: 'gpt-4o', metadata: { step: 1 } });
      expect(run).toMatchObject({
        threadId: thread.id,
        status: 'running',
        provider: 'openai',
        model: 'gpt-4o',
        metadata: { step: 1 },
        finishedAt: null,
        inputTokens: null,
      });
      const usage = { inputTokens: 120, outputTokens: 30, reasoningTokens: 7, cachedInputTokens: 100 };
      const finished = await tenant.finishRun(run.id, { status: 'completed', usage });
      expect(finished).toMatchObject({ status: 'completed', ...usage, error: null });
      expect(finished.finishedAt!.getTime()).toBeGreaterThanOrEqual(run.startedAt.getTime());
      // A second finish (a retried onEnd) changes nothing.
      expect(await tenant.finishRun(run.id, { status: 'cancelled', usage: { inputTokens: 1 } })).toEqual(finished);
      const [row] = await database.admin.query(
        'select status, input_tokens, output_tokens, reasoning_tokens, cached_input_tokens from agent_run where id = $1',
        [run.id],
      );
      expect(row).toEqual({
        status: 'completed',
        input_tokens: 120,
        output_tokens: 30,
        reasoning_tokens: 7,
        cached_input_tokens: 100,
      });
      expect(await tenant.getRun(run.id)).toEqual(finished);
    });

    it('should fail a run with the error name and message', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const run = await tenant.startRun(thread.id);
      const failed = await tenant.failRun(run.id, {
        error: new TypeError('provider exploded'),
        usage: { inputTokens: 5 },
      });
      expect(failed).toMatchObject({
        status: 'failed',
        error: { name: 'TypeError', message: 'provider exploded' },
        inputTokens: 5,
        outputTokens: null,
      });
      const [row] = await database.admin.query('select status, error from agent_run where id = $1', [run.id]);
      expect(row).toEqual({ status: 'failed', error: { name: 'TypeError', message: 'provider exploded' } });
    });

    it('should reject bad input with typed errors', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const run = await tenant.startRun(thread.id);
      await expect(tenant.startRun(randomUUID())).rejects.toThrow(NotFoundError);
      await expect(tenant.finishRun(randomUUID(), { status: 'completed' })).rejects.toThrow(NotFoundError);
      await expect(tenant.finishRun(run.id, { status: 'done' as never })).rejects.toThrow(
        'Invalid status "done": expected completed, failed or cancelled.',
      );
      await expect(tenant.finishRun(run.id, { status: 'completed', usage: { inputTokens: -1 } })).rejects.toThrow(
        'Invalid usage.inputTokens -1: expected a non-negative integer.',
      );
      expect((await tenant.getRun(run.id)).status).toBe('running');
    });
  });

  describe('message to run key', () => {
    it('should refuse to delete a run that has messages, refuse a run of another thread, and still delete the thread', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const other = await tenant.createThread();
      const run = await tenant.startRun(thread.id);
      const otherRun = await tenant.startRun(other.id);
      const { stored } = await tenant.appendMessage(thread.id, assistantMessage('a1', 'answer'), { runId: run.id });
      expect(stored.runId).toBe(run.id);
      await expect(
        tenant.appendMessage(thread.id, assistantMessage('a2', 'x'), { runId: otherRun.id }),
      ).rejects.toThrow(NotFoundError);
      const direct = await withTenant(database.db, { tenantId: tenant.tenantId, role: APP_ROLE }, (tx) =>
        tx.execute(sql`delete from agent_run where id = ${run.id}`),
      ).catch((error: unknown) => error);
      expect(postgresErrorCode(direct)).toBe('23503');
      expect(await childCounts(thread.id)).toEqual({
        agent_run: 1,
        agent_message: 1,
        agent_summary: 0,
        agent_context_snapshot: 0,
      });
      await tenant.deleteThread(thread.id);
      expect(await childCounts(thread.id)).toEqual({
        agent_run: 0,
        agent_message: 0,
        agent_summary: 0,
        agent_context_snapshot: 0,
      });
    });
  });
});
