// `npx tsx bench/citus.ts`: an indication of the store on a local Citus cluster (a coordinator and two workers on
// this machine) beside one plain PostgreSQL 15 server, with the same settings (fsync off) and the same workloads:
//   W1  50 threads × 40 messages, 8 threads in flight, one appendMessage per call (appends/s)
//   W3  on a thread of 10,000 messages: listMessages(limit 50) and loadContext({ maxTailMessages: 50 }), p50 ms
// Plus, on plain PostgreSQL only, the plan and latency of a thread read under the tenant policy with and without the
// `(select …)` around the tenant setting (the policy has none; `--policy` runs only that part).
// Needs Citus installed into PostgreSQL 15 (see docs/citus.md, "Running on Citus").
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createAgentHistory, migrate, type AgentHistoryDatabase } from '../src/index.js';
import { createCitusDatabase, onNode, startCitusCluster, type CitusCluster } from '../test/support/citus-cluster.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import { docsDistributionSql } from '../test/citus/support/citus-test-database.js';

const LOGIN = 'agent_history_bench';
const DATABASE = 'bench_citus';
const SETTINGS = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: 300 };
const THREAD_SIZE = 10_000;
const ROUNDS = 30;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

async function prepareRoles(sql: postgres.Sql, citus: boolean) {
  await sql.unsafe(`
    do $$ begin
      if not exists (select 1 from pg_roles where rolname = 'agent_history_app') then
        create role agent_history_app ${citus ? 'login' : 'nologin'};
      end if;
      if not exists (select 1 from pg_roles where rolname = '${LOGIN}') then
        create role ${LOGIN} login noinherit;
      end if;
    end $$;
    grant agent_history_app to ${LOGIN};
    ${citus ? `alter role ${LOGIN} set citus.propagate_set_commands = 'local';` : ''}`);
}

/** Seeds one thread of THREAD_SIZE messages with SQL (as the superuser), as the store would have stored them. */
async function seedThread(db: AgentHistoryDatabase, admin: postgres.Sql, tenantId: string) {
  const thread = await createAgentHistory({ db }).forTenant(tenantId).createThread({ title: 'long' });
  await admin.unsafe(
    `insert into agent_message (tenant_id, thread_id, sequence, message_id, role, status, parts, metadata, byte_size,
       token_count, created_at, updated_at, completed_at)
     select $1::uuid, $2::uuid, q, 'seed-' || q, case when q % 2 = 0 then 'assistant' else 'user' end::agent_message_role,
       'completed', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('word ', 40) || q)), '{}'::jsonb,
       230, 42, now(), now(), now()
     from generate_series(1, $3::int) q`,
    [tenantId, thread.id, THREAD_SIZE],
  );
  await admin.unsafe(
    `update agent_thread set next_sequence = $3::bigint where tenant_id = $1::uuid and id = $2::uuid`,
    [tenantId, thread.id, THREAD_SIZE],
  );
  return thread.id;
}

async function w1(db: AgentHistoryDatabase) {
  const store = createAgentHistory({ db }).forTenant(randomUUID());
  const threads = await Promise.all(Array.from({ length: 50 }, () => store.createThread()));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < threads.length; index = next++) {
        for (let message = 0; message < 40; message++) {
          await store.appendMessage(threads[index]!.id, {
            id: `m${message}`,
            role: message % 2 ? 'assistant' : 'user',
            parts: [{ type: 'text', text: `message ${message} ${'word '.repeat(30)}` }],
          });
        }
      }
    }),
  );
  return round((50 * 40) / ((performance.now() - started) / 1000), 0);
}

async function w3(db: AgentHistoryDatabase, tenantId: string, threadId: string) {
  const store = createAgentHistory({ db }).forTenant(tenantId);
  const time = async (work: () => Promise<unknown>) => {
    for (let index = 0; index < 3; index++) await work();
    const samples: number[] = [];
    for (let index = 0; index < ROUNDS; index++) {
      const started = performance.now();
      await work();
      samples.push(performance.now() - started);
    }
    return round(median(samples));
  };
  return {
    newest50: await time(() => store.listMessages(threadId, { limit: 50 })),
    context50: await time(() => store.loadContext(threadId, { maxTailMessages: 50 })),
  };
}

/**
 * EXPLAIN ANALYZE of the store's full-thread read (loadContext's tail query) and the store's own timing of
 * loadContext({ maxTailMessages: 10,000 }), per policy, alternating the two policies round by round (ABAB…) so that
 * load from elsewhere on the machine falls on both; medians of the rounds.
 */
async function policyPlans(
  appUrl: string,
  admin: postgres.Sql,
  db: AgentHistoryDatabase,
  tenant: string,
  thread: string,
) {
  const policies = {
    'with (select …)': `(select nullif(current_setting('app.tenant_id', true), '')::uuid)`,
    'without (as shipped)': `nullif(current_setting('app.tenant_id', true), '')::uuid`,
  };
  const app = postgres(appUrl, { max: 1, onnotice: () => {} });
  const store = createAgentHistory({ db }).forTenant(tenant);
  const measured = Object.fromEntries(
    Object.keys(policies).map((name) => [
      name,
      { plan: [] as string[], explainMs: [] as number[], loadMs: [] as number[] },
    ]),
  );
  try {
    for (let round = 0; round < 12; round++) {
      for (const [name, predicate] of Object.entries(policies)) {
        for (const table of ['agent_thread', 'agent_message']) {
          await admin.unsafe(
            `alter policy ${table}_tenant_isolation on ${table} using (tenant_id = ${predicate}) with check (tenant_id = ${predicate})`,
          );
        }
        const plan = await app.begin(async (tx) => {
          await tx.unsafe(
            `select set_config('app.tenant_id', '${tenant}', true), set_config('role', 'agent_history_app', true)`,
          );
          const rows = await tx.unsafe(
            `explain (analyze, buffers, costs off, timing on)
             select * from agent_message where tenant_id = $1 and thread_id = $2 and sequence > 0 and deleted_at is null
             order by sequence desc limit 10001`,
            [tenant, thread],
          );
          return rows.map((row) => (row as Record<string, string>)['QUERY PLAN']!);
        });
        const started = performance.now();
        await store.loadContext(thread, { maxTailMessages: 10_000 });
        const loadMs = performance.now() - started;
        if (round < 2) continue; // warm-up
        const entry = measured[name]!;
        entry.plan = plan;
        entry.explainMs.push(Number(/Execution Time: ([\d.]+)/.exec(plan.join('\n'))![1]));
        entry.loadMs.push(loadMs);
      }
    }
  } finally {
    await app.end();
  }
  return Object.fromEntries(
    Object.entries(measured).map(([name, { plan, explainMs, loadMs }]) => [
      name,
      { plan, executionMsMedian: round(median(explainMs)), loadContext10kMsMedian: round(median(loadMs)) },
    ]),
  );
}

async function onPlainPostgres(policyOnly: boolean) {
  const cluster = await startPostgresCluster({ settings: SETTINGS });
  try {
    const admin = postgres(cluster.url('postgres'), { max: 2, onnotice: () => {} });
    await migrate(drizzle({ client: postgres(cluster.url('postgres'), { max: 1, onnotice: () => {} }) }));
    await prepareRoles(admin, false);
    const appUrl = cluster.url('postgres').replace('postgres://postgres@', `postgres://${LOGIN}@`);
    const client = postgres(appUrl, { max: 10, onnotice: () => {} });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    const tenant = randomUUID();
    const thread = await seedThread(db, admin, tenant);
    await admin.unsafe('vacuum analyze');
    const plans = await policyPlans(appUrl, admin, db, tenant, thread);
    const figures = policyOnly ? {} : { w1AppendsPerSecond: await w1(db), w3: await w3(db, tenant, thread) };
    await client.end();
    await admin.end();
    return { plans, ...figures };
  } finally {
    cluster.stop();
  }
}

async function onCitus() {
  const cluster: CitusCluster = await startCitusCluster({ workerCount: 2 });
  try {
    for (const node of cluster.nodes) await onNode(node, 'postgres', (sql) => prepareRoles(sql, true));
    await createCitusDatabase(cluster, DATABASE);
    const admin = postgres(cluster.coordinator.url(DATABASE), { max: 2, onnotice: () => {} });
    await migrate(drizzle({ client: postgres(cluster.coordinator.url(DATABASE), { max: 1, onnotice: () => {} }) }));
    for (const statement of docsDistributionSql().split(/;\s*\n/)) {
      const text = statement.replace(/^--.*$/gm, '').trim();
      if (text) await admin.unsafe(text);
    }
    const appUrl = cluster.coordinator.url(DATABASE).replace('postgres://postgres@', `postgres://${LOGIN}@`);
    const client = postgres(appUrl, { max: 10, onnotice: () => {} });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    const tenant = randomUUID();
    const thread = await seedThread(db, admin, tenant);
    await admin.unsafe('vacuum analyze');
    const figures = { w1AppendsPerSecond: await w1(db), w3: await w3(db, tenant, thread) };
    await client.end();
    await admin.end();
    return figures;
  } finally {
    cluster.stop();
  }
}

const policyOnly = process.argv.includes('--policy');
const report: Record<string, unknown> = { postgres: await onPlainPostgres(policyOnly) };
if (!policyOnly) report.citus = await onCitus();
console.log(JSON.stringify(report, null, 2));
