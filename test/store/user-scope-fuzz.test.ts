import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, NotFoundError, type TenantHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';
import { ROW_ORDER, TABLES } from '../support/tables.js';

const USERS = ['ann', 'ben', "o'hara\\x"] as const;

/** What one user does to one thread (by index into the threads made so far). */
type Operation =
  | { kind: 'create'; user: number }
  | { kind: 'act'; user: number; thread: number; action: Action }
  | { kind: 'read'; user: number };
type Action = (typeof ACTIONS)[number];
const ACTIONS = [
  'getThread',
  'append',
  'listMessages',
  'rename',
  'startRun',
  'exclude',
  'pin',
  'redact',
  'fork',
  'summary',
  'softDelete',
  'delete',
] as const;

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), user: fc.nat(USERS.length - 1) }),
  fc.record({
    kind: fc.constant('act' as const),
    user: fc.nat(USERS.length - 1),
    thread: fc.nat(7),
    action: fc.constantFrom(...ACTIONS),
  }),
  fc.record({ kind: fc.constant('read' as const), user: fc.nat(USERS.length - 1) }),
);

/** Runs `action` on `threadId`; the store's answer is not checked here, only whether it was refused as NotFound. */
async function act(store: TenantHistory, threadId: string, action: Action, step: number): Promise<unknown> {
  switch (action) {
    case 'getThread':
      return store.getThread(threadId);
    case 'append':
      return store.appendMessage(threadId, userMessage(`m${step}`, `word${step} shared`));
    case 'listMessages':
      return store.listMessages(threadId);
    case 'rename':
      return store.renameThread(threadId, { title: `t${step}` });
    case 'startRun':
      return store.startRun(threadId);
    case 'exclude':
      return store.excludeMessages(threadId, ['m0'], { reason: 'x' });
    case 'pin':
      return store.pinMessage(threadId, 'm0');
    case 'redact':
      return store.redactMessage(threadId, 'm0', { actor: 'x', reason: 'x' });
    case 'fork':
      return store.forkThread(threadId, { atSequence: 0 });
    case 'summary':
      return store.writeSummary(threadId, {
        fromSequence: 1,
        throughSequence: 1,
        content: 's',
        tokenCount: 1,
        policyVersion: 'p',
      });
    case 'softDelete':
      return store.softDeleteThread(threadId);
    case 'delete':
      return store.deleteThread(threadId);
  }
}

describe.each(BACKENDS)('user scope under random users, threads and operations on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** Every row of the tenant that does not belong to `user`, read as superuser. */
  const othersRows = async (tenantId: string, user: string) => {
    const dump: Record<string, unknown[]> = {};
    for (const table of TABLES)
      dump[table] = await database.admin.query(
        `select * from ${table} where tenant_id = $1 and user_id is distinct from $2 order by ${ROW_ORDER[table]}`,
        [tenantId, user],
      );
    return dump;
  };

  it('should never let one user read or change another user’s thread, and keep every row with its thread’s user', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 4, maxLength: 14 }), async (operations) => {
        const tenantId = randomUUID();
        const history = createAgentHistory({ db: database.db });
        const stores = USERS.map((userId) => history.forTenant(tenantId, { userId }));
        const admin = history.forTenant(tenantId);
        const threads: Array<{ id: string; owner: number }> = [];
        for (const [step, op] of operations.entries()) {
          if (op.kind === 'create') {
            const thread = await stores[op.user]!.createThread();
            threads.push({ id: thread.id, owner: op.user });
            // Every thread gets one message, so the message actions have something to act on.
            await stores[op.user]!.appendMessage(thread.id, userMessage('m0', `first${step} shared`));
          } else if (op.kind === 'read') {
            const store = stores[op.user]!;
            const own = new Set(threads.filter((thread) => thread.owner === op.user).map((thread) => thread.id));
            const listed = (await store.listThreads()).threads;
            expect(listed.every((thread) => thread.userId === USERS[op.user])).toBe(true);
            const hits = await store.searchMessages('shared', { limit: 100 });
            expect(hits.filter((hit) => !own.has(hit.threadId))).toEqual([]);
            const visible = (await admin.listThreads({ userId: USERS[op.user] })).threads.map((thread) => thread.id);
            expect(listed.map((thread) => thread.id).sort()).toEqual(visible.sort());
          } else if (threads.length > 0) {
            const thread = threads[op.thread % threads.length]!;
            const user = USERS[op.user]!;
            const before = await othersRows(tenantId, user);
            const outcome = await act(stores[op.user]!, thread.id, op.action, step).then(
              (result) => result,
              (error: unknown) => error,
            );
            if (thread.owner !== op.user) {
              expect([op.action, outcome]).toEqual([op.action, expect.any(NotFoundError)]);
              expect(await othersRows(tenantId, user)).toEqual(before);
            } else if (op.action === 'fork' && !(outcome instanceof Error)) {
              threads.push({ id: (outcome as { id: string }).id, owner: op.user });
            }
          }
        }
        // Every row of every table carries its thread's user (audit events of a deleted thread included).
        for (const table of TABLES.slice(1)) {
          const strays = await database.admin.query(
            `select c.tenant_id, c.thread_id from ${table} c join agent_thread t on t.tenant_id = c.tenant_id and t.id = c.thread_id
             where c.tenant_id = $1 and c.user_id is distinct from t.user_id`,
            [tenantId],
          );
          expect([table, strays]).toEqual([table, []]);
        }
        const owners = new Map(threads.map((thread) => [thread.id, USERS[thread.owner]]));
        const audit = await database.admin.query<{ thread_id: string; user_id: string | null }>(
          'select thread_id, user_id from agent_audit_event where tenant_id = $1 and thread_id is not null',
          [tenantId],
        );
        expect(audit.filter((row) => owners.get(row.thread_id) !== row.user_id)).toEqual([]);
      }),
      { numRuns: 12 },
    );
  });
});
