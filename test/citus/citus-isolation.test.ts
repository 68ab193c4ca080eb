import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentHistory, VersionConflictError, type TenantHistory } from '../../src/index.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { rowsOf } from '../../src/tenant/database.js';
import { withTenant, type TenantTransaction } from '../../src/tenant/with-tenant.js';
import { openTestDatabase, type TestDatabase } from './support/citus-test-database.js';

// The Citus forms of the checks in test/store/isolation.test.ts and test/store/concurrency.test.ts that do not carry
// over as written (vitest.citus.config.ts lists them): a probe without a tenant filter is a multi-shard query, which
// this suite makes raise; the distribution column cannot be updated; lock waits happen on the workers.

const TABLES = [
  'agent_thread',
  'agent_run',
  'agent_message',
  'agent_summary',
  'agent_context_snapshot',
  'agent_audit_event',
  'agent_tool_payload',
  'agent_memory',
];
const text = (id: string, value: string) => ({ id, role: 'user' as const, parts: [{ type: 'text', text: value }] });

describe('Citus: tenant isolation on the shards and concurrent appends', () => {
  let database: TestDatabase;
  let tenantA: TenantHistory;
  let tenantB: TenantHistory;
  let threadA: string;
  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    const history = createAgentHistory({ db: database.db });
    tenantA = history.forTenant(randomUUID());
    tenantB = history.forTenant(randomUUID());
    threadA = (await tenantA.createThread({ title: 'A' })).id;
    const run = await tenantA.startRun(threadA);
    await tenantA.appendMessage(threadA, text('a1', 'secret'), { runId: run.id });
    await tenantA.writeSummary(threadA, {
      fromSequence: 1,
      throughSequence: 1,
      content: 'summary',
      tokenCount: 1,
      policyVersion: 'p',
    });
    await tenantA.writeSnapshot(threadA, {
      expectedVersion: 0,
      throughSequence: 1,
      includedSequences: [1],
      policyVersion: 'p',
      messagesHash: 'h',
    });
    // A tool output over the limit: kept in agent_tool_payload, on the tenant's shard.
    const small = createAgentHistory({ db: database.db, maxMessageBytes: 2048 }).forTenant(tenantA.tenantId);
    await small.beginAssistantMessage(threadA, { messageId: 'a2' });
    await small.finalizeMessage(threadA, 'a2', {
      status: 'completed',
      parts: [{ type: 'tool-x', toolCallId: 'c', state: 'output-available', input: {}, output: 'x'.repeat(4000) }],
    });
    // Memory: the thread's working-memory document, on the tenant's shard.
    await tenantA.updateWorkingMemory({ scope: 'thread', threadId: threadA, content: 'plan', expectedVersion: 0 });
    await tenantA.softDeleteThread((await tenantA.createThread({ title: 'audited' })).id);
    await tenantB.createThread({ title: 'B' });
  });
  afterAll(() => database.close());

  const inTenant = <RESULT>(tenantId: string, work: (tx: TenantTransaction) => Promise<RESULT>) =>
    withTenant(database.db, { tenantId, role: 'agent_history_app' }, work);
  const countOf = async (table: string, tenantId: string) =>
    Number(
      (
        await database.admin.query<{ n: string }>(`select count(*) as n from ${table} where tenant_id = $1`, [tenantId])
      )[0]!.n,
    );

  it('should hold rows of tenant A in every table (so the probes below aim at something)', async () => {
    for (const table of TABLES) expect([table, await countOf(table, tenantA.tenantId)]).not.toEqual([table, 0]);
  });

  it("should find no row of another tenant in any table, nor update or delete one (routed to that tenant's shard)", async () => {
    const before = await Promise.all(TABLES.map((table) => countOf(table, tenantA.tenantId)));
    for (const table of TABLES) {
      const target = sql`${sql.raw(`tenant_id = `)}${tenantA.tenantId}::uuid`;
      const seen = await inTenant(tenantB.tenantId, async (tx) =>
        rowsOf(await tx.execute(sql`${sql.raw(`select * from ${table} where `)}${target}`)),
      );
      const changed = await inTenant(tenantB.tenantId, async (tx) =>
        rowsOf(
          await tx.execute(
            sql`${sql.raw(`update ${table} set created_at = created_at where `)}${target} returning tenant_id`,
          ),
        ),
      ).catch(postgresErrorCode);
      const deleted = await inTenant(tenantB.tenantId, async (tx) =>
        rowsOf(await tx.execute(sql`${sql.raw(`delete from ${table} where `)}${target} returning tenant_id`)),
      ).catch(postgresErrorCode);
      // The audit log is insert-only for the application role, the tool payloads are never updated: refused outright.
      const refused = table === 'agent_audit_event' ? '42501' : [];
      const notUpdatable = table === 'agent_tool_payload' ? '42501' : refused;
      expect([table, seen, changed, deleted]).toEqual([table, [], notUpdatable, refused]);
    }
    expect(await Promise.all(TABLES.map((table) => countOf(table, tenantA.tenantId)))).toEqual(before);
  });

  it('should reject a row written for another tenant with 42501 from the worker', async () => {
    const threadInsert = await inTenant(tenantB.tenantId, (tx) =>
      tx.execute(
        sql`insert into agent_thread (tenant_id, id) values (${tenantA.tenantId}::uuid, ${randomUUID()}::uuid)`,
      ),
    ).catch((error: unknown) => error);
    const auditInsert = await inTenant(tenantB.tenantId, (tx) =>
      tx.execute(
        sql`insert into agent_audit_event (tenant_id, action, actor) values (${tenantA.tenantId}::uuid, 'x', 'x')`,
      ),
    ).catch((error: unknown) => error);
    expect([postgresErrorCode(threadInsert), postgresErrorCode(auditInsert)]).toEqual(['42501', '42501']);
  });

  it('should see no rows of a tenant when no tenant is set (fail closed on the worker)', async () => {
    for (const table of TABLES) {
      const unset = await inTenant('', async (tx) =>
        rowsOf(await tx.execute(sql`${sql.raw(`select * from ${table} where tenant_id = `)}${tenantA.tenantId}::uuid`)),
      );
      expect([table, unset]).toEqual([table, []]);
    }
  });

  it('should keep one row when 20 requests race with one message id, every caller getting its sequence, no gap', async () => {
    const thread = (await tenantB.createThread()).id;
    await tenantB.appendMessage(thread, text('first', 'before the race'));
    const stores = Array.from({ length: 20 }, () =>
      createAgentHistory({ db: database.db }).forTenant(tenantB.tenantId),
    );
    const results = await Promise.all(stores.map((store) => store.appendMessage(thread, text('same', 'racing'))));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.stored.sequence))).toEqual(new Set([2]));
    const next = await tenantB.appendMessage(thread, text('after', 'after the race'));
    expect(next.stored.sequence).toBe(3);
  });

  it('should keep one row when 20 requests race with one client request id', async () => {
    const thread = (await tenantB.createThread()).id;
    const stores = Array.from({ length: 20 }, () =>
      createAgentHistory({ db: database.db }).forTenant(tenantB.tenantId),
    );
    const results = await Promise.all(
      stores.map((store, index) =>
        store.appendMessage(thread, text(`attempt-${index}`, 'racing'), { clientRequestId: 'request-1' }),
      ),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.stored.message.id)).size).toBe(1);
    expect(new Set(results.map((result) => result.stored.sequence))).toEqual(new Set([1]));
  });

  it('should let exactly one of 10 snapshot writers with the same expected version win', async () => {
    const thread = (await tenantB.createThread()).id;
    await tenantB.appendMessage(thread, text('m1', 'one'));
    const stores = Array.from({ length: 10 }, () =>
      createAgentHistory({ db: database.db }).forTenant(tenantB.tenantId),
    );
    const outcomes = await Promise.allSettled(
      stores.map((store, index) =>
        store.writeSnapshot(thread, {
          expectedVersion: 0,
          throughSequence: 1,
          includedSequences: [1],
          policyVersion: 'p',
          messagesHash: `writer-${index}`,
        }),
      ),
    );
    const rejected = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(rejected.every((outcome) => outcome.reason instanceof VersionConflictError)).toBe(true);
    expect((await tenantB.loadContext(thread)).currentVersion).toBe(1);
  });

  it('should give 32 concurrent appenders on one thread the sequences 1..N exactly', async () => {
    const thread = (await tenantA.createThread()).id;
    const stores = Array.from({ length: 8 }, () => createAgentHistory({ db: database.db }).forTenant(tenantA.tenantId));
    await Promise.all(
      stores.map(async (store, writer) => {
        for (let index = 0; index < 4; index++) await store.appendMessage(thread, text(`w${writer}-${index}`, 'x'));
      }),
    );
    const sequences = await database.admin.query<{ sequence: string }>(
      'select sequence from agent_message where tenant_id = $1 and thread_id = $2 order by sequence',
      [tenantA.tenantId, thread],
    );
    expect(sequences.map((row) => Number(row.sequence))).toEqual(Array.from({ length: 32 }, (_, index) => index + 1));
  });
});
