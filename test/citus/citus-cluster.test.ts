import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CitusSettingError, createAgentHistory, NotFoundError, type AgentHistoryDatabase } from '../../src/index.js';
import { rowsOf } from '../../src/tenant/database.js';
import { withTenant } from '../../src/tenant/with-tenant.js';
import { citusClusterAt, onNode } from '../support/citus-cluster.js';
import { openTestDatabase, docsDistributionSql, type TestDatabase } from './support/citus-test-database.js';
import { TABLES } from '../support/tables.js';

const text = (id: string, value: string) => ({ id, role: 'user' as const, parts: [{ type: 'text', text: value }] });

describe('Citus: the procedure of docs/citus.md on a coordinator and two workers', () => {
  let database: TestDatabase;
  const pools: postgres.Sql[] = [];
  const pool = (options: postgres.Options<Record<string, postgres.PostgresType>> = {}) => {
    const client = postgres(database.appUrl!, { max: 4, onnotice: () => {}, ...options });
    pools.push(client);
    return drizzle({ client }) as unknown as AgentHistoryDatabase;
  };
  beforeAll(async () => {
    database = await openTestDatabase('postgres');
  });
  afterAll(async () => {
    for (const client of pools) await client.end();
    await database.close();
  });

  /** The shard of `tenantId` (every table is co-located with agent_thread). */
  const shardOf = async (tenantId: string) =>
    Number(
      (
        await database.admin.query<{ shard: string }>(
          `select get_shard_id_for_distribution_column('agent_thread', $1::uuid) as shard`,
          [tenantId],
        )
      )[0]!.shard,
    );

  it('should distribute every table by tenant in one colocation group and the append functions with force_delegation', async () => {
    const tables = await database.admin.query<{ table: string; column: string; colocation: number }>(
      `select logicalrelid::regclass::text as table, column_to_column_name(logicalrelid, partkey) as column,
         colocationid as colocation
       from pg_dist_partition order by 1`,
    );
    expect(tables.map(({ table, column }) => [table, column])).toEqual(
      [...TABLES].sort().map((table) => [table, 'tenant_id']),
    );
    expect(new Set(tables.map(({ colocation }) => colocation)).size).toBe(1);
    const functions = await database.admin.query<{ name: string; delegated: boolean; colocation: number }>(
      `select objid::regprocedure::text as name, force_delegation as delegated, colocationid as colocation
       from pg_dist_object where classid = 'pg_proc'::regclass order by 1`,
    );
    // The append functions are distributed by their tenant argument; the others are only propagated to the workers
    // as objects (the one-statement reads and writes refuse to run on a coordinator, and those returning a table's
    // row type are not propagated at all; the trigger functions run on the shards
    // with their row).
    expect(functions.map(({ name, delegated }) => [name.replace(/\(.*/, ''), delegated])).toEqual([
      ['agent_history_append_message', true],
      ['agent_history_append_messages', true],
      ['agent_history_list_chat_messages', null],
      ['agent_history_list_messages', null],
      ['agent_history_list_messages_json', null],
      ['agent_history_load_context_json', null],
      ['agent_history_message_content_version', null],
      ['agent_history_message_search_vector', null],
      ['agent_history_search_version', null],
      ['agent_history_write_answer', null],
    ]);
    const delegated = functions.filter(({ delegated }) => delegated);
    expect(delegated.every(({ colocation }) => colocation === tables[0]!.colocation)).toBe(true);
  });

  it('should enable and force row-level security, with the tenant policy, on every shard of every worker', async () => {
    const cluster = citusClusterAt(inject('citusServerUrls'));
    const database_ = new URL(database.adminUrl!).pathname.slice(1);
    let shards = 0;
    for (const worker of cluster.workers) {
      const rows = await onNode(worker, database_, async (sql) => {
        // Citus hides shards from catalog queries unless told not to.
        await sql.unsafe('set citus.override_table_visibility to off');
        return rowsOf<{ relname: string; forced: boolean; enabled: boolean; policies: number }>(
          await sql.unsafe(`
            select c.relname, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
              (select count(*)::int from pg_policy p where p.polrelid = c.oid) as policies
            from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'public' and c.relkind = 'r' and c.relname ~ '^agent_[a-z_]+_[0-9]+$'`),
        );
      });
      shards += rows.length;
      expect(rows.filter((row) => !row.enabled || !row.forced || row.policies !== 1)).toEqual([]);
    }
    expect(shards).toBe(TABLES.length * 32);
  });

  it('should raise on any multi-shard statement of the app login (citus.multi_task_query_log_level = error)', async () => {
    const db = pool();
    const tenantId = randomUUID();
    const settings = await withTenant(db, { tenantId, role: 'agent_history_app' }, async (tx) =>
      rowsOf(
        await tx.execute(
          `select current_setting('citus.multi_task_query_log_level') as level, current_setting('citus.propagate_set_commands') as propagation` as never,
        ),
      ),
    );
    expect(settings).toEqual([{ level: 'error', propagation: 'local' }]);
    const error = await withTenant(db, { tenantId, role: 'agent_history_app' }, (tx) =>
      tx.execute('select count(*) from agent_message' as never),
    ).catch((caught: unknown) => caught);
    expect(String((error as Error).cause)).toContain('multi-task query about to be executed');
  });

  it('should fail with CitusSettingError naming citus.propagate_set_commands when the login lacks it, not read nothing', async () => {
    const db = pool({ connection: { 'citus.propagate_set_commands': 'none' } as Record<string, string> });
    const store = createAgentHistory({ db }).forTenant(randomUUID());
    const error = await store.listThreads().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CitusSettingError);
    expect(error).toMatchObject({
      code: 'citus-setting-invalid',
      setting: 'citus.propagate_set_commands',
      value: 'none',
      expected: 'local',
    });
    expect((error as Error).message).toContain("ALTER ROLE <login> SET citus.propagate_set_commands = 'local'");
  });

  it('should keep two tenants placed in one shard apart, and keep each tenant on one worker', async () => {
    const first = randomUUID();
    let second = randomUUID();
    const shard = await shardOf(first);
    while ((await shardOf(second)) !== shard) second = randomUUID();
    const history = createAgentHistory({ db: database.db });
    const [storeA, storeB] = [history.forTenant(first), history.forTenant(second)];
    const threadA = await storeA.createThread({ title: 'A' });
    const threadB = await storeB.createThread({ title: 'B' });
    await storeA.appendMessage(threadA.id, text('a1', 'secret of A'));
    await storeB.appendMessage(threadB.id, text('b1', 'secret of B'));
    await storeA.forkThread(threadA.id, { atSequence: 1 });

    expect((await storeA.listThreads()).threads.map((thread) => thread.title)).toEqual(['A', 'A']);
    expect((await storeB.listThreads()).threads.map((thread) => thread.title)).toEqual(['B']);
    await expect(storeA.getThread(threadB.id)).rejects.toThrow('was not found');
    await expect(storeB.loadContext(threadA.id)).rejects.toThrow('was not found');
    // A chat window's page: its function refuses to run on the coordinator, so the store reads it in a transaction.
    expect((await storeA.listChatMessages(threadA.id)).messages.map((entry) => entry.message.id)).toEqual(['a1']);
    await expect(storeB.listChatMessages(threadA.id)).rejects.toThrow('was not found');
    expect((await storeB.searchMessages('secret')).map((hit) => hit.messageId)).toEqual(['b1']);

    const placements = await database.admin.query<{ tenant: string; nodes: number; shards: number }>(
      `select t.tenant, count(distinct p.nodeport)::int as nodes, count(distinct s.shardid)::int as shards
       from unnest($1::uuid[]) as t(tenant)
       cross join pg_dist_partition d
       join pg_dist_shard s on s.logicalrelid = d.logicalrelid
         and s.shardid = get_shard_id_for_distribution_column(d.logicalrelid, t.tenant)
       join pg_dist_shard_placement p on p.shardid = s.shardid
       group by t.tenant order by t.tenant`,
      [[first, second]],
    );
    expect(placements.map(({ nodes, shards }) => [nodes, shards])).toEqual([
      [1, TABLES.length],
      [1, TABLES.length],
    ]);
  });

  it('should delegate an append inside a caller transaction to the worker (force_delegation)', async () => {
    const tenantId = randomUUID();
    const outer = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const thread = await outer.createThread();
    await database.db.transaction(async (tx) => {
      const inner = createAgentHistory({ db: tx as unknown as AgentHistoryDatabase }).forTenant(tenantId);
      await inner.appendMessage(thread.id, text('m1', 'in a transaction'));
      await inner.appendMessage(thread.id, text('m2', 'still in it'));
    });
    expect((await outer.loadContext(thread.id)).tail.map((stored) => [stored.sequence, stored.message.id])).toEqual([
      [1, 'm1'],
      [2, 'm2'],
    ]);
  });
});

describe('Citus: re-creating a distributed function (the hazard docs/citus.md names)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('postgres');
  });
  afterAll(() => database.close());

  it('should lose the distribution on DROP + CREATE, fail appends, and work again once the documented statement is re-run', async () => {
    const signature = 'agent_history_append_messages(uuid, text, jsonb, json, boolean, text)';
    const distributed = async () =>
      (
        await database.admin.query<{ n: number }>(
          `select count(*)::int as n from pg_dist_object
           where objid = $1::regprocedure and distribution_argument_index is not null`,
          [signature],
        )
      )[0]!.n;
    const single = `agent_history_append_message(uuid, text, uuid, text, text, agent_message_role, agent_message_status, json, jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean, boolean, text)`;
    const definitions: string[] = [];
    for (const name of [signature, single]) {
      const [row] = await database.admin.query<{ definition: string }>(
        `select pg_get_functiondef($1::regprocedure) as definition`,
        [name],
      );
      definitions.push(row!.definition);
    }
    expect(await distributed()).toBe(1);
    await database.admin.query(`drop function ${signature}`);
    await database.admin.query(`drop function ${single}`);
    for (const definition of definitions) await database.admin.query(definition);
    expect(await distributed()).toBe(0);

    const store = createAgentHistory({ db: database.db, appendBatching: false }).forTenant(randomUUID());
    const thread = await store.createThread();
    // Run on the coordinator, the function finds no thread there: the append fails with NotFoundError.
    await expect(store.appendMessage(thread.id, text('m1', 'lost'))).rejects.toThrow(NotFoundError);

    for (const statement of docsDistributionSql().split(/;\s*\n/)) {
      const sql = statement.replace(/^--.*$/gm, '').trim();
      if (sql.includes('create_distributed_function')) await database.admin.query(sql);
    }
    expect(await distributed()).toBe(1);
    expect((await store.appendMessage(thread.id, text('m1', 'found'))).stored.sequence).toBe(1);
  });
});
