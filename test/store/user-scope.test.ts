import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  withTenant,
  type TenantHistory,
  type TenantTransaction,
} from '../../src/index.js';
import { rowsOf } from '../../src/tenant/database.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, describeOffCitus, useTestDatabase } from '../support/test-database.js';
import { assistantMessage, userMessage } from '../support/fixtures.js';
import {
  FOREIGN_ROW_OPERATIONS,
  payloadParts,
  unaimedStoreMethods,
  type Target,
} from '../support/foreign-row-operations.js';
import { ROW_ORDER, TABLES } from '../support/tables.js';

const APP_ROLE = 'agent_history_app';

describe.each(BACKENDS)('user scope on %s', (backend) => {
  const database = useTestDatabase(backend);
  const tenantId = randomUUID();
  let admin: TenantHistory;
  let alice: TenantHistory;
  let bob: TenantHistory;
  let target: Target;
  let bobThread: string;

  /** All of Alice's rows in every table, read as superuser. */
  const rowsOfAlice = async () => {
    const dump: Record<string, unknown[]> = {};
    for (const table of TABLES)
      dump[table] = await database.admin.query(
        `select * from ${table} where tenant_id = $1 and user_id is distinct from 'bob' order by ${ROW_ORDER[table]}`,
        [tenantId],
      );
    return dump;
  };
  const asBob = <RESULT>(work: (tx: TenantTransaction) => Promise<RESULT>) =>
    withTenant(database.db, { tenantId, userId: 'bob', role: APP_ROLE }, work);

  beforeAll(async () => {
    const history = createAgentHistory({ db: database.db, leaseMs: 1 });
    admin = history.forTenant(tenantId);
    alice = history.forTenant(tenantId, { userId: 'alice' });
    bob = createAgentHistory({
      db: database.db,
      _internal: { now: () => new Date(Date.now() + 3_600_000) },
    }).forTenant(tenantId, { userId: 'bob' });
    const thread = await alice.createThread({ title: 'A secret' });
    const run = await alice.startRun(thread.id);
    await alice.appendMessage(thread.id, userMessage('u1', 'alpha secret of Alice'));
    // Written tenant-wide (an admin, a background job): the rows still belong to Alice's thread, so to Alice.
    await admin.appendMessage(thread.id, assistantMessage('a1', 'alpha answer of Alice'), { runId: run.id });
    await alice.excludeMessages(thread.id, ['a1'], { reason: 'superseded-by-regenerate' });
    await alice.beginAssistantMessage(thread.id, { messageId: 'pending-a', runId: run.id });
    // Its tool output over the limit, checkpointed tenant-wide: the payload rows are Alice's too.
    const small = createAgentHistory({ db: database.db, leaseMs: 1, maxMessageBytes: 2048 }).forTenant(tenantId);
    await small.checkpointMessage(thread.id, 'pending-a', { parts: payloadParts });
    // The answer's resumable stream log, written tenant-wide: its rows are Alice's too.
    await admin.appendStreamChunks(thread.id, 'pending-a', { batch: 0, chunks: [{ type: 'start' }] });
    const summary = await admin.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: 2,
      content: 'alpha summary',
      tokenCount: 2,
      policyVersion: 'p1',
    });
    await alice.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 2,
      summaryId: summary.id,
      includedSequences: [3],
      policyVersion: 'p1',
      messagesHash: 'h',
    });
    // Her thread's working memory and the recall entries of its messages (embedded by her store).
    await alice.updateWorkingMemory({
      scope: 'thread',
      threadId: thread.id,
      content: 'alpha plan',
      expectedVersion: 0,
    });
    await alice.embedPendingMemory({ embedder: { modelId: 'm', embed: async (texts) => texts.map(() => [1, 2]) } });
    target = { threadId: thread.id, runId: run.id, messageId: 'u1', pendingId: 'pending-a' };
    bobThread = (await bob.createThread()).id;
    await bob.appendMessage(bobThread, userMessage('u1', 'alpha of Bob'));
  });

  it("should give every row of Alice's thread her user id, whoever wrote it", async () => {
    for (const table of TABLES) {
      const owners = await database.admin.query<{ user_id: string | null }>(
        `select distinct user_id from ${table} where tenant_id = $1 and ${table === 'agent_thread' ? 'id' : 'thread_id'} = $2`,
        [tenantId, target.threadId],
      );
      expect([table, owners]).toEqual([table, [{ user_id: 'alice' }]]);
    }
  });

  describe('store operations', () => {
    it.each(FOREIGN_ROW_OPERATIONS)(
      "should answer %s on another user's thread exactly like on a missing one",
      async (_name, operation) => {
        const before = await rowsOfAlice();
        const foreign = await operation(bob, target).catch((error: unknown) => error);
        const missing = await operation(bob, {
          threadId: randomUUID(),
          runId: randomUUID(),
          messageId: 'missing',
          pendingId: 'missing',
        }).catch((error: unknown) => error);
        expect(foreign).toBeInstanceOf(NotFoundError);
        expect(missing).toBeInstanceOf(NotFoundError);
        expect((foreign as NotFoundError).code).toBe((missing as NotFoundError).code);
        expect(await rowsOfAlice()).toEqual(before);
      },
    );

    it('should aim every store method that takes a row id at another user (a new method must join the list)', () => {
      expect(unaimedStoreMethods(bob)).toEqual([]);
    });

    it("should delete none of another user's stream chunks, answering as for a missing thread", async () => {
      const before = await rowsOfAlice();
      expect(await bob.deleteStreamChunks(target.threadId)).toBe(0);
      expect(await bob.deleteStreamChunks(target.threadId, { messageId: target.pendingId })).toBe(0);
      expect(await bob.deleteStreamChunks(randomUUID())).toBe(0);
      expect(await rowsOfAlice()).toEqual(before);
    });

    it("should neither list, search, recover nor expire another user's threads, nor reference their runs", async () => {
      const before = await rowsOfAlice();
      expect((await bob.listThreads()).threads.map((thread) => thread.id)).toEqual([bobThread]);
      expect((await bob.listThreads({ userId: 'alice' })).threads).toEqual([]);
      expect((await bob.searchMessages('alpha')).map((hit) => [hit.threadId, hit.messageId])).toEqual([
        [bobThread, 'u1'],
      ]);
      expect(await bob.searchMessages('alpha', { threadId: target.threadId })).toEqual([]);
      expect(await bob.recoverAbandonedMessages()).toEqual([]);
      await expect(
        bob.appendMessage(bobThread, assistantMessage('a-run', 'x'), { runId: target.runId }),
      ).rejects.toThrow('The run');
      expect(await bob.deleteThreadsOlderThan({ olderThan: new Date(Date.now() + 7_200_000) })).toBe(1);
      expect(await rowsOfAlice()).toEqual(before);
      // Alice still sees all of her rows, and the tenant-wide store sees everyone's.
      expect((await alice.searchMessages('alpha')).map((hit) => hit.messageId).sort()).toEqual(['a1', 'u1']);
      expect((await alice.listMessages(target.threadId)).messages.map((stored) => stored.message.id)).toEqual([
        'pending-a',
        'a1',
        'u1',
      ]);
      expect((await alice.listSummaries(target.threadId)).length).toBe(1);
      expect((await admin.listThreads()).threads.map((thread) => thread.userId)).toContain('alice');
      bobThread = (await bob.createThread()).id;
    });

    it('should refuse to create or fork a thread for another user under a scope, before any SQL', async () => {
      await expect(bob.createThread({ userId: 'alice' })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(bob.forkThread(bobThread, { atSequence: 0, userId: 'alice' })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      expect((await bob.createThread()).userId).toBe('bob');
      const fork = await alice.forkThread(target.threadId, { atSequence: 2 });
      expect(fork.userId).toBe('alice');
      const copies = await database.admin.query<{ user_id: string }>(
        'select distinct user_id from agent_message where thread_id = $1',
        [fork.id],
      );
      expect(copies).toEqual([{ user_id: 'alice' }]);
    });

    it.each([[''], ['x'.repeat(201)], ['a\u0000b'], [42], [null], [undefined]])(
      'should refuse the user id %j with InvalidArgumentError, synchronously',
      (userId) => {
        const history = createAgentHistory({ db: database.db });
        expect(() => history.forTenant(tenantId, { userId: userId as string })).toThrow(InvalidArgumentError);
      },
    );
  });

  describeOffCitus('raw SQL and the append functions under a user scope', () => {
    it("should see, update and delete none of another user's rows in any table", async () => {
      const before = await rowsOfAlice();
      for (const table of TABLES) {
        const seen = await asBob(async (tx) =>
          rowsOf<{ user_id: string | null }>(await tx.execute(sql.raw(`select distinct user_id from ${table}`))),
        );
        expect([table, seen.every((row) => row.user_id === 'bob')]).toEqual([table, true]);
        const changed = await asBob(async (tx) =>
          rowsOf(
            await tx.execute(
              sql.raw(`update ${table} set user_id = user_id where user_id = 'alice' returning tenant_id`),
            ),
          ),
        ).catch(postgresErrorCode);
        const deleted = await asBob(async (tx) =>
          rowsOf(await tx.execute(sql.raw(`delete from ${table} where user_id = 'alice' returning tenant_id`))),
        ).catch(postgresErrorCode);
        // The audit log is insert-only for the application role; the chunk log and payloads are never updated (no grant).
        const refused = table === 'agent_audit_event' ? '42501' : [];
        const notUpdatable = table === 'agent_stream_chunk' || table === 'agent_tool_payload' ? '42501' : refused;
        expect([table, changed, deleted]).toEqual([table, notUpdatable, refused]);
      }
      expect(await rowsOfAlice()).toEqual(before);
    });

    it("should refuse a row for another user, a child row claiming Bob in Alice's thread, and moving a row", async () => {
      const attempts = {
        thread: sql`insert into agent_thread (tenant_id, id, user_id) values (${tenantId}::uuid, ${randomUUID()}::uuid, 'alice')`,
        nullThread: sql`insert into agent_thread (tenant_id, id) values (${tenantId}::uuid, ${randomUUID()}::uuid)`,
        audit: sql`insert into agent_audit_event (tenant_id, user_id, action, actor) values (${tenantId}::uuid, 'alice', 'x', 'x')`,
        runInAliceThread: sql`insert into agent_run (tenant_id, thread_id, user_id) values (${tenantId}::uuid, ${target.threadId}::uuid, 'bob')`,
        summaryInAliceThread: sql`insert into agent_summary (tenant_id, thread_id, user_id, from_sequence, through_sequence, content, token_count, policy_version)
          values (${tenantId}::uuid, ${target.threadId}::uuid, 'bob', 1, 1, 'x', 1, 'p')`,
        moveOwnThread: sql`update agent_thread set user_id = 'alice' where id = ${bobThread}::uuid`,
      };
      const codes: Record<string, string | undefined> = {};
      for (const [name, statement] of Object.entries(attempts))
        codes[name] = await asBob((tx) => tx.execute(statement)).then(() => 'written', postgresErrorCode);
      expect(codes).toEqual({
        thread: '42501',
        nullThread: '42501',
        audit: '42501',
        // The row's user_id is Bob's, so the policy lets it by; the (tenant, thread, user) foreign key does not.
        runInAliceThread: '23503',
        summaryInAliceThread: '23503',
        moveOwnThread: '42501',
      });
    });

    it("should make the append functions insert nothing into another user's thread", async () => {
      const before = await rowsOfAlice();
      const item = (messageId: string) =>
        sql`${target.threadId}::uuid, ${messageId}::text, null::text, 'user'::agent_message_role,
          'completed'::agent_message_status, '[{"type":"text","text":"x"}]'::json, '{}'::jsonb, null::uuid, 10, 1,
          'c', null::integer[], null::timestamptz, false`;
      const single = await asBob(async (tx) =>
        rowsOf(
          await tx.execute(
            sql`select * from agent_history_append_message(${tenantId}::uuid, ${APP_ROLE}::text, ${item('bob-1')})`,
          ),
        ),
      );
      // The fast path (a retry finds the stored row) must not hand back Alice's message either.
      const retry = await asBob(async (tx) =>
        rowsOf(
          await tx.execute(
            sql`select * from agent_history_append_message(${tenantId}::uuid, ${APP_ROLE}::text, ${item('u1')})`,
          ),
        ),
      );
      const items = JSON.stringify([
        {
          threadId: target.threadId,
          messageId: 'bob-2',
          clientRequestId: null,
          role: 'user',
          status: 'completed',
          parts: [],
          metadata: {},
          runId: null,
          byteSize: 1,
          tokenCount: 1,
          tokenCounterId: 'c',
          leaseExpiresAt: null,
          pinned: false,
        },
        {
          threadId: bobThread,
          messageId: 'bob-3',
          clientRequestId: null,
          role: 'user',
          status: 'completed',
          parts: [],
          metadata: {},
          runId: null,
          byteSize: 1,
          tokenCount: 1,
          tokenCounterId: 'c',
          leaseExpiresAt: null,
          pinned: false,
        },
      ]);
      const batch = await asBob(async (tx) =>
        rowsOf<{ item: number; message_id: string }>(
          await tx.execute(
            sql`select * from agent_history_append_messages(${tenantId}::uuid, ${APP_ROLE}::text, ${items}::jsonb, '[[],[]]'::json)`,
          ),
        ),
      );
      expect([single, retry, batch.map((row) => [row.item, row.message_id])]).toEqual([[], [], [[1, 'bob-3']]]);
      expect(await rowsOfAlice()).toEqual(before);
      const [bobRow] = await database.admin.query<{ user_id: string }>(
        "select user_id from agent_message where message_id = 'bob-3'",
      );
      expect(bobRow).toEqual({ user_id: 'bob' });
    });
  });
});
