// PGlite runs no autovacuum, so a table is analyzed only when somebody runs ANALYZE; without statistics the planner
// found an append's thread row through the thread list's index (every thread of the tenant read and filtered) and
// looked for a retried message through the sequence index (every message of the thread read and filtered): an
// append cost 4.4× as much CPU in a tenant of 20,000 threads. The store keeps the statistics itself. What an append's
// statements read, from their executed plans.
import { randomUUID } from 'node:crypto';
import { PgDialect, pgSchema } from 'drizzle-orm/pg-core';
import { describe, expect, it, vi } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { appendStatements, type AppendItem } from '../../src/store/append-statements.js';
import {
  analyzeStaleTables,
  CHECK_EVERY,
  noteEmbeddedAppends,
  type StatisticsClient,
} from '../../src/store/embedded-statistics.js';
import { defineAgentTables } from '../../src/schema/define-agent-tables.js';
import { planNodes } from '../support/nested-plans.js';
import { openTestDatabase, type TestDatabase } from '../support/test-database.js';

const dialect = new PgDialect();
const statements = appendStatements(defineAgentTables());

/** The rows an append's statements read and threw away, over every plan the append ran (its nested ones too). */
async function rowsFilteredByAnAppend(database: TestDatabase, tenantId: string, threadId: string): Promise<number> {
  const item: AppendItem = {
    threadId,
    messageId: `probe-${randomUUID()}`,
    clientRequestId: `request-${randomUUID()}`,
    role: 'user',
    status: 'completed',
    partsJson: '[{"type":"text","text":"probe"}]',
    metadataJson: '{}',
    runId: null,
    byteSize: 40,
    tokenCount: 1,
    tokenCounterId: 'probe',
    partTokenCounts: [1],
    leaseExpiresAt: null,
    pinned: false,
  };
  const statement = dialect.sqlToQuery(statements.single(tenantId, 'agent_history_app', item)).sql;
  const plans = await database.explainNested(statement);
  expect(plans.some((plan) => /update\s+"public"\."agent_thread"/i.test(plan['Query Text']))).toBe(true);
  return plans
    .flatMap((plan) => planNodes(plan.Plan))
    .reduce((sum, node) => sum + (node['Rows Removed by Filter'] ?? 0), 0);
}

const analyzedRows = async (database: TestDatabase, table: string) =>
  (
    await database.admin.query<{ rows: number }>(
      `select reltuples::int as rows from pg_class where oid = $1::regclass`,
      [table],
    )
  )[0]!.rows;

describe('planner statistics on PGlite', () => {
  it('should keep an append from reading the tenant’s other threads or the thread’s messages', async () => {
    const database = await openTestDatabase('pglite');
    try {
      const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
      const threads = [];
      for (let index = 0; index < 600; index++) threads.push((await store.createThread()).id);
      const [tenantId] = (
        await database.admin.query<{ tenant: string }>(`select tenant_id::text as tenant from agent_thread limit 1`)
      ).map((row) => row.tenant);
      const long = threads[0]!;
      // Appends in bursts, as a chat's would come: the store looks at the tables every CHECK_EVERY messages.
      for (let sent = 0; sent < 4 * CHECK_EVERY; sent += 64) {
        await Promise.all(
          Array.from({ length: 64 }, (_, index) =>
            store.appendMessage(long, {
              id: `m-${sent + index}`,
              role: 'user',
              parts: [{ type: 'text', text: `message ${sent + index}` }],
            }),
          ),
        );
      }
      await vi.waitFor(async () => expect(await analyzedRows(database, 'agent_message')).toBeGreaterThan(1_500));
      expect(await analyzedRows(database, 'agent_thread')).toBe(600);

      // Without statistics: 599 threads and 2,048 messages read and thrown away.
      expect(await rowsFilteredByAnAppend(database, tenantId!, long)).toBeLessThan(10);
      expect(await rowsFilteredByAnAppend(database, tenantId!, threads[300]!)).toBeLessThan(10);
    } finally {
      await database.close();
    }
  });

  it('should analyze a database that was loaded with rows and never analyzed, at its first append', async () => {
    const database = await openTestDatabase('pglite');
    try {
      const tenantId = randomUUID();
      await database.admin.query(
        `insert into agent_thread (tenant_id, id) select $1::uuid, gen_random_uuid() from generate_series(1, 3000)`,
        [tenantId],
      );
      // As a restored dump is: rows loaded, then vacuumed (or indexed), which puts the size in the catalog but
      // gathers no statistics.
      await database.admin.query(`vacuum agent_thread`);
      expect(await analyzedRows(database, 'agent_thread')).toBe(3000);
      const statistics = async () =>
        (
          await database.admin.query<{ n: number }>(
            `select count(*)::int as n from pg_stats where tablename = 'agent_thread'`,
          )
        )[0]!.n;
      expect(await statistics()).toBe(0);
      const [{ id: threadId }] = await database.admin.query<{ id: string }>(
        `select id::text from agent_thread limit 1`,
      );
      const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
      await store.appendMessage(threadId, { id: 'first', role: 'user', parts: [{ type: 'text', text: 'hello' }] });

      await vi.waitFor(async () => expect(await statistics()).toBeGreaterThan(0));
      expect(await rowsFilteredByAnAppend(database, tenantId, threadId)).toBeLessThan(10);
    } finally {
      await database.close();
    }
  });

  it('should analyze only the tables of 64 kB or more that were never analyzed or grew by a fifth', async () => {
    const database = await openTestDatabase('pglite');
    try {
      const analyzed: string[][] = [];
      const pglite = (database.db as unknown as { $client: StatisticsClient }).$client;
      const client: StatisticsClient = {
        exec: (query) => {
          const analyze = /; analyze (.*)$/.exec(query);
          if (analyze) analyzed.push([...analyze[1]!.matchAll(/(\w+)"? \(/g)].map((match) => match[1]!));
          return pglite.exec(query);
        },
      };
      const addThreads = (count: number) =>
        database.admin.query(
          `insert into agent_thread (tenant_id, id) select gen_random_uuid(), gen_random_uuid() from generate_series(1, ${count})`,
        );
      const tables = statements.tables;
      expect(tables).toContain('"public"."agent_thread"');
      expect(tables).toContain('"public"."agent_message"');
      // Empty tables, then a table of a few pages never analyzed: nothing worth analyzing.
      await analyzeStaleTables(client, tables);
      await addThreads(20);
      await analyzeStaleTables(client, tables);
      expect(analyzed).toEqual([]);

      await addThreads(2000);
      await analyzeStaleTables(client, tables);
      expect(analyzed).toEqual([['agent_thread']]);
      // A sample's statistics (a target of 10: at most 11 histogram bounds), the session's own target untouched, and
      // none of the JSON columns.
      const [{ bounds }] = await database.admin.query<{ bounds: number }>(
        `select cardinality(histogram_bounds::text::text[])::int as bounds from pg_stats
          where tablename = 'agent_thread' and attname = 'id'`,
      );
      expect(bounds).toBeLessThanOrEqual(11);
      expect(bounds).toBeGreaterThan(1);
      const [{ target }] = await database.admin.query<{ target: string }>(
        `select current_setting('default_statistics_target') as target`,
      );
      expect(target).toBe('100');
      const columns = (
        await database.admin.query<{ name: string }>(
          `select attname as name from pg_stats where tablename = 'agent_thread' order by 1`,
        )
      ).map((row) => row.name);
      expect(columns).toContain('tenant_id');
      expect(columns).not.toContain('metadata');
      // Analyzed, and not grown since; then grown by less than a fifth: not yet.
      await analyzeStaleTables(client, tables);
      await addThreads(100);
      await analyzeStaleTables(client, tables);
      expect(analyzed).toHaveLength(1);
      await addThreads(1000);
      await analyzeStaleTables(client, tables);
      expect(analyzed).toEqual([['agent_thread'], ['agent_thread']]);
      // A name that is no table of the database (a quote in it too) is skipped, not sent.
      await analyzeStaleTables(client, ['"public"."missing"', `"public"."it's"`]);
      expect(analyzed).toHaveLength(2);
    } finally {
      await database.close();
    }
  });

  it('should never fail an append or leave a rejection when the database closes under the look', async () => {
    const database = await openTestDatabase('pglite');
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    const appended = await store.appendMessage(thread.id, {
      id: 'one',
      role: 'user',
      parts: [{ type: 'text', text: 'hello' }],
    });
    expect(appended.stored.sequence).toBe(1);
    // The first append's look is queued behind it; the database closes before it runs.
    await database.close();
    const failing = {
      exec: () => Promise.reject(new Error('closed')),
    };
    const look = noteEmbeddedAppends(failing, statements.tables, 1);
    expect(look).not.toBeNull();
    await expect(look).resolves.toBeUndefined();
    // The next look waits for CHECK_EVERY more messages.
    expect(noteEmbeddedAppends(failing, statements.tables, CHECK_EVERY - 1)).toBeNull();
    const next = noteEmbeddedAppends(failing, statements.tables, 1);
    expect(next).not.toBeNull();
    await next;
    // A copy of the list (another store of the same schema, made for the next request) counts with it: no look yet.
    expect(noteEmbeddedAppends(failing, [...statements.tables], 1)).toBeNull();
    // A store of tables in another schema on the same instance keeps its own count: its first append looks at once.
    const other = appendStatements(defineAgentTables({ schema: pgSchema('agent') })).tables;
    expect(other).toContain('"agent"."agent_message"');
    expect(noteEmbeddedAppends(failing, other, 1)).not.toBeNull();
  });
});
