import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  NotFoundError,
  withTenant,
  type AgentHistoryDatabase,
  type TenantHistory,
  type TenantTransaction,
} from '../../src/index.js';
import { rowsOf } from '../../src/tenant/database.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { CONTRACT_BACKENDS, describeOffCitus, itOffCitus, useTestDatabase } from '../support/test-database.js';
import { assistantMessage, userMessage } from '../support/fixtures.js';
import {
  FOREIGN_ROW_OPERATIONS,
  PAYLOAD_CALL,
  payloadParts,
  unaimedStoreMethods,
  type Target,
} from '../support/foreign-row-operations.js';
import { TABLES } from '../support/tables.js';

const APP_ROLE = 'agent_history_app';
// No sub-select (Citus refuses one in a policy on a distributed table).
// And the user scope, in the same permissive policy: Citus would re-create a restrictive one as permissive.
const POLICY_PREDICATE = `((tenant_id = (NULLIF(current_setting('app.tenant_id'::text, true), ''::text))::uuid) AND ((NULLIF(current_setting('app.user_id'::text, true), ''::text) IS NULL) OR (user_id = NULLIF(current_setting('app.user_id'::text, true), ''::text))))`;

describe.each(CONTRACT_BACKENDS)('tenant isolation on %s', (backend) => {
  const database = useTestDatabase(backend);
  let tenantA: TenantHistory;
  let tenantB: TenantHistory;
  let target: Target;
  let ownThreadB: string;

  /** All of a tenant's rows in every table, read as superuser. */
  const rowsOfTenant = async (tenantId: string) => {
    const dump: Record<string, unknown[]> = {};
    for (const table of TABLES)
      dump[table] = await database.admin.query(`select * from ${table} t where tenant_id = $1 order by t::text`, [
        tenantId,
      ]);
    return dump;
  };
  const inTenantB = <RESULT>(work: (tx: TenantTransaction) => Promise<RESULT>) =>
    withTenant(database.db, { tenantId: tenantB.tenantId, role: APP_ROLE }, work);

  beforeAll(async () => {
    tenantA = createAgentHistory({ db: database.db, leaseMs: 1 }).forTenant(randomUUID());
    tenantB = createAgentHistory({
      db: database.db,
      _internal: { now: () => new Date(Date.now() + 3_600_000) },
    }).forTenant(randomUUID());
    const thread = await tenantA.createThread({ userId: 'shared-user', title: 'A secret' });
    const run = await tenantA.startRun(thread.id);
    await tenantA.appendMessage(thread.id, userMessage('u1', 'alpha secret of A'));
    await tenantA.appendMessage(thread.id, assistantMessage('a1', 'alpha answer of A'), { runId: run.id });
    await tenantA.excludeMessages(thread.id, ['a1'], { reason: 'superseded-by-regenerate' });
    await tenantA.beginAssistantMessage(thread.id, { messageId: 'pending-a', runId: run.id });
    await tenantA.appendStreamChunks(thread.id, 'pending-a', {
      batch: 0,
      chunks: [{ type: 'text-delta', delta: 'A' }],
    });
    // Its tool output over the limit: kept in agent_tool_payload (a store of the same tenant with a small limit).
    const small = createAgentHistory({ db: database.db, leaseMs: 1, maxMessageBytes: 2048 });
    await small.forTenant(tenantA.tenantId).checkpointMessage(thread.id, 'pending-a', { parts: payloadParts });
    expect((await tenantA.streamToolPayload(thread.id, 'pending-a', { toolCallId: PAYLOAD_CALL })).chunkCount).toBe(1);
    const summary = await tenantA.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: 2,
      content: 'alpha summary',
      tokenCount: 2,
      policyVersion: 'p1',
    });
    await tenantA.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 2,
      summaryId: summary.id,
      includedSequences: [3],
      policyVersion: 'p1',
      messagesHash: 'h',
    });
    target = { threadId: thread.id, runId: run.id, messageId: 'u1', pendingId: 'pending-a' };
    ownThreadB = (await tenantB.createThread({ userId: 'shared-user' })).id;
    await tenantB.appendMessage(ownThreadB, userMessage('u1', 'alpha of B'));
  });

  describe('store operations', () => {
    it.each(FOREIGN_ROW_OPERATIONS)(
      "should answer %s on another tenant's row exactly like on a missing one",
      async (_name, operation) => {
        const before = await rowsOfTenant(tenantA.tenantId);
        const foreign = await operation(tenantB, target).catch((error: unknown) => error);
        const missing = await operation(tenantB, {
          threadId: randomUUID(),
          runId: randomUUID(),
          messageId: 'missing',
          pendingId: 'missing',
        }).catch((error: unknown) => error);
        expect(foreign).toBeInstanceOf(NotFoundError);
        expect(missing).toBeInstanceOf(NotFoundError);
        expect((foreign as NotFoundError).code).toBe((missing as NotFoundError).code);
        expect(await rowsOfTenant(tenantA.tenantId)).toEqual(before);
      },
    );

    it('should aim every store method that takes a row id at another tenant (a new method must join the list)', () => {
      expect(unaimedStoreMethods(tenantB)).toEqual([]);
    });

    it("should delete none of another tenant's stream chunks, answering as for a missing thread", async () => {
      const before = await rowsOfTenant(tenantA.tenantId);
      expect(await tenantB.deleteStreamChunks(target.threadId)).toBe(0);
      expect(await tenantB.deleteStreamChunks(target.threadId, { messageId: target.pendingId })).toBe(0);
      expect(await tenantB.deleteStreamChunks(randomUUID())).toBe(0);
      expect(await rowsOfTenant(tenantA.tenantId)).toEqual(before);
    });

    it("should neither list, search, recover, expire nor reference another tenant's rows", async () => {
      const before = await rowsOfTenant(tenantA.tenantId);
      expect((await tenantB.listThreads({ userId: 'shared-user' })).threads.map((thread) => thread.id)).toEqual([
        ownThreadB,
      ]);
      expect((await tenantB.searchMessages('alpha')).map((hit) => [hit.threadId, hit.messageId])).toEqual([
        [ownThreadB, 'u1'],
      ]);
      expect(await tenantB.searchMessages('alpha', { threadId: target.threadId })).toEqual([]);
      expect(await tenantB.recoverAbandonedMessages()).toEqual([]);
      await expect(
        tenantB.appendMessage(ownThreadB, assistantMessage('a-run', 'x'), { runId: target.runId }),
      ).rejects.toThrow('The run');
      expect(await rowsOfTenant(tenantA.tenantId)).toEqual(before);
      // Tenant A still sees all of its own rows.
      expect((await tenantA.searchMessages('alpha')).map((hit) => hit.messageId).sort()).toEqual(['a1', 'u1']);
      expect((await tenantA.listMessages(target.threadId)).messages.map((stored) => stored.message.id)).toEqual([
        'pending-a',
        'a1',
        'u1',
      ]);
    });

    it("should expire only the tenant's own threads", async () => {
      const before = await rowsOfTenant(tenantA.tenantId);
      const expiring = createAgentHistory({ db: database.db }).forTenant(randomUUID());
      await expiring.createThread();
      expect(await expiring.deleteThreadsOlderThan({ olderThan: new Date(Date.now() + 3_600_000) })).toBe(1);
      expect(await rowsOfTenant(tenantA.tenantId)).toEqual(before);
    });
  });

  describeOffCitus('raw SQL in a tenant transaction (withTenant)', () => {
    it("should see, update and delete none of another tenant's rows in any table", async () => {
      const before = await rowsOfTenant(tenantA.tenantId);
      for (const table of TABLES) {
        const seen = await inTenantB(async (tx) =>
          rowsOf<{ tenant_id: string }>(await tx.execute(sql.raw(`select distinct tenant_id from ${table}`))),
        );
        expect(seen.every((row) => row.tenant_id === tenantB.tenantId)).toBe(true);
        const changed = await inTenantB(async (tx) =>
          rowsOf(
            await tx.execute(
              sql`${sql.raw(`update ${table} set tenant_id = tenant_id where tenant_id = `)}${tenantA.tenantId}::uuid returning tenant_id`,
            ),
          ),
        ).catch(postgresErrorCode);
        const deleted = await inTenantB(async (tx) =>
          rowsOf(
            await tx.execute(
              sql`${sql.raw(`delete from ${table} where tenant_id = `)}${tenantA.tenantId}::uuid returning tenant_id`,
            ),
          ),
        ).catch(postgresErrorCode);
        // The audit log is insert-only for the application role; the chunk log and the payloads are never updated:
        // what the role may not do is refused outright.
        const neverUpdated = ['agent_audit_event', 'agent_stream_chunk', 'agent_tool_payload'];
        const refusedUpdate = neverUpdated.includes(table) ? '42501' : [];
        const refusedDelete = table === 'agent_audit_event' ? '42501' : [];
        expect([table, changed, deleted]).toEqual([table, refusedUpdate, refusedDelete]);
      }
      expect(await rowsOfTenant(tenantA.tenantId)).toEqual(before);
    });

    it('should refuse to write a row for another tenant', async () => {
      const threadInsert = await inTenantB((tx) =>
        tx.execute(
          sql`insert into agent_thread (tenant_id, id) values (${tenantA.tenantId}::uuid, ${randomUUID()}::uuid)`,
        ),
      ).catch((error: unknown) => error);
      const auditInsert = await inTenantB((tx) =>
        tx.execute(
          sql`insert into agent_audit_event (tenant_id, action, actor) values (${tenantA.tenantId}::uuid, 'x', 'x')`,
        ),
      ).catch((error: unknown) => error);
      const moveOwnRow = await inTenantB((tx) =>
        tx.execute(sql`update agent_thread set tenant_id = ${tenantA.tenantId}::uuid where id = ${ownThreadB}::uuid`),
      ).catch((error: unknown) => error);
      expect([postgresErrorCode(threadInsert), postgresErrorCode(auditInsert), postgresErrorCode(moveOwnRow)]).toEqual([
        '42501',
        '42501',
        '42501',
      ]);
    });

    it('should see no rows at all when no tenant is set', async () => {
      for (const table of TABLES) {
        const emptyTenant = await withTenant(database.db, { tenantId: '', role: APP_ROLE }, async (tx) =>
          rowsOf(await tx.execute(sql.raw(`select * from ${table}`))),
        );
        const unset = await database.db.transaction(async (tx) => {
          await tx.execute(sql`select set_config('role', ${APP_ROLE}, true)`);
          return rowsOf(await tx.execute(sql.raw(`select * from ${table}`)));
        });
        expect([table, emptyTenant, unset]).toEqual([table, [], []]);
      }
    });
  });

  describe('row-level security in the catalog', () => {
    it('should have RLS enabled and forced on all six tables, with one tenant-and-user policy each for the app role', async () => {
      const tables = await database.admin.query(
        `select relname, relrowsecurity, relforcerowsecurity from pg_class where relname = any($1) and relkind = 'r' order by relname`,
        [[...TABLES]],
      );
      expect(tables).toEqual(
        [...TABLES].sort().map((relname) => ({ relname, relrowsecurity: true, relforcerowsecurity: true })),
      );
      const policies = await database.admin.query(
        `select tablename, policyname, roles::text as roles, cmd, permissive, qual, with_check from pg_policies where tablename = any($1) order by tablename, policyname`,
        [[...TABLES]],
      );
      expect(policies).toEqual(
        [...TABLES].sort().map((table) => ({
          tablename: table,
          policyname: `${table}_tenant_isolation`,
          roles: `{${APP_ROLE}}`,
          cmd: 'ALL',
          permissive: 'PERMISSIVE',
          qual: POLICY_PREDICATE,
          with_check: POLICY_PREDICATE,
        })),
      );
    });

    itOffCitus(
      'should hide every row from a table owner that is not superuser (FORCE), and show them once FORCE is off',
      async () => {
        const session = backend !== 'pglite' ? postgres(database.adminUrl!, { max: 1, onnotice: () => {} }) : undefined;
        const query = async (text: string) =>
          session ? rowsOf<Record<string, unknown>>(await session.unsafe(text)) : database.admin.query(text);
        const owner = `agent_history_owner_probe_${randomUUID().slice(0, 8)}`;
        try {
          await query('begin');
          await query(`create role ${owner} nologin nosuperuser nobypassrls`);
          await query(`alter table agent_thread owner to ${owner}`);
          await query(
            `select set_config('app.tenant_id', '${tenantA.tenantId}', true), set_config('role', '${owner}', true)`,
          );
          const forced = await query('select current_user as who, count(*)::int as n from agent_thread');
          await query('alter table agent_thread no force row level security');
          const unforced = await query('select count(*)::int as n from agent_thread');
          expect(forced).toEqual([{ who: owner, n: 0 }]);
          expect(unforced[0]!.n).toBeGreaterThanOrEqual(2);
        } finally {
          await query('rollback');
          await session?.end();
        }
        const [force] = await database.admin.query(
          `select relforcerowsecurity from pg_class where relname = 'agent_thread'`,
        );
        expect(force).toEqual({ relforcerowsecurity: true });
      },
    );
  });

  describe('pooled connections', () => {
    it('should leave every pooled connection as the login role with an empty tenant setting after store calls', async () => {
      const stores = Array.from({ length: 6 }, () => createAgentHistory({ db: database.db }).forTenant(randomUUID()));
      await Promise.all(
        stores.flatMap((store) =>
          [1, 2, 3, 4, 5].map(async (index) => {
            const thread = await store.createThread();
            await store.appendMessage(thread.id, userMessage(`m${index}`, 'hi'));
            await store.listMessages(thread.id);
            // Failed calls (a rolled-back transaction, a failed autocommit statement) must reset the connection too.
            await expect(store.getThread(randomUUID())).rejects.toThrow(NotFoundError);
            await expect(store.appendMessage(randomUUID(), userMessage('x', 'hi'))).rejects.toThrow(NotFoundError);
            await expect(
              store.writeSnapshot(thread.id, {
                expectedVersion: 5,
                throughSequence: 0,
                includedSequences: [],
                policyVersion: 'p',
                messagesHash: 'h',
              }),
            ).rejects.toThrow('Stale');
          }),
        ),
      );
      const probe = sql`select pg_backend_pid() as pid, current_user as who, coalesce(current_setting('app.tenant_id', true), '<unset>') as tenant from pg_sleep(0.3)`;
      if (backend === 'pglite') {
        expect(
          rowsOf<{ who: string; tenant: string }>(await database.db.execute(probe)).map(({ who, tenant }) => ({
            who,
            tenant,
          })),
        ).toEqual([{ who: 'postgres', tenant: '' }]);
        return;
      }
      const pool = await database.admin.query<{ pid: number }>(
        `select pid from pg_stat_activity where datname = current_database() and usename = $1`,
        [APP_LOGIN],
      );
      expect(pool).toHaveLength(10);
      const states = (await Promise.all(pool.map(() => database.db.execute(probe)))).flatMap((result) =>
        rowsOf<{ pid: number; who: string; tenant: string }>(result),
      );
      expect(new Set(states.map((state) => state.pid))).toEqual(new Set(pool.map((row) => row.pid)));
      // A server connection that PgBouncer opened but no store call used never had the setting: '<unset>' is as
      // clean as the '' a reset leaves; what must never show is a tenant id.
      expect(states.map(({ who, tenant }) => ({ who, tenant: tenant === '<unset>' ? '' : tenant }))).toEqual(
        pool.map(() => ({ who: APP_LOGIN, tenant: '' })),
      );
      expect(states.filter((state) => state.tenant === '').length).toBeGreaterThan(0);
    });
  });
});

describe('the login role on postgres', () => {
  const database = useTestDatabase('postgres');
  let tenantId: string;
  beforeAll(async () => {
    tenantId = randomUUID();
    await createAgentHistory({ db: database.db }).forTenant(tenantId).createThread();
  });

  it('should be neither superuser, owner nor BYPASSRLS, and be denied the tables without the role switch', async () => {
    const [role] = await database.admin.query(
      `select rolsuper, rolbypassrls, rolinherit, pg_has_role($1, $2, 'MEMBER') as member from pg_roles where rolname = $1`,
      [APP_LOGIN, APP_ROLE],
    );
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false, rolinherit: false, member: true });
    const owners = await database.admin.query<{ tableowner: string }>(
      `select distinct tableowner from pg_tables where tablename = any($1)`,
      [[...TABLES]],
    );
    expect(owners.map((row) => row.tableowner)).toEqual(['postgres']);
    const plain = drizzle({
      client: postgres(database.appUrl!, { max: 1, onnotice: () => {} }),
    }) as unknown as AgentHistoryDatabase;
    for (const table of TABLES) {
      const denied = await plain.execute(sql.raw(`select count(*) from ${table}`)).catch((error: unknown) => error);
      const withTenantOnly = await plain
        .transaction(async (tx) => {
          await tx.execute(sql`select set_config('app.tenant_id', ${tenantId}, true)`);
          return tx.execute(sql.raw(`select count(*) from ${table}`));
        })
        .catch((error: unknown) => error);
      expect([table, postgresErrorCode(denied), postgresErrorCode(withTenantOnly)]).toEqual([table, '42501', '42501']);
    }
    await (plain as unknown as { $client: postgres.Sql }).$client.end();
  });
});
