// What planner statistics are worth to an append on PGlite, which runs no autovacuum: CPU per call of the append
// function (the statement the store sends, through PGlite's `exec`, so that the store's own upkeep does not run) in
// a tenant of BENCH_STATS_THREADS threads (default 20,000) and on a thread of BENCH_STATS_MESSAGES messages (default
// 3,000), both loaded with SQL and never analyzed, then again once the store's upkeep (`analyzeStaleTables`) has
// analyzed the tables that grew; and that upkeep's own time. `npx tsx bench/pglite-statistics.ts`.
import { PgDialect } from 'drizzle-orm/pg-core';
import { benchAppendItem } from './append-item.js';
import { MessageFactory } from './messages.js';
import { openEmbedded } from './workloads/w5-embedded.js';
import { appendStatements } from '../src/store/append-statements.js';
import { analyzeStaleTables } from '../src/store/embedded-statistics.js';
import { defineAgentTables } from '../src/schema/define-agent-tables.js';
import { runMain } from './run-main.js';

const threadCount = Number(process.env.BENCH_STATS_THREADS ?? 20_000);
const messageCount = Number(process.env.BENCH_STATS_MESSAGES ?? 3_000);
const CALLS = 200;

async function main() {
  const embedded = await openEmbedded();
  const { client } = embedded;
  const store = embedded.tenant();
  const statements = appendStatements(defineAgentTables());
  const dialect = new PgDialect();
  const factory = new MessageFactory({ seed: 42 });
  const short = (await store.createThread()).id;
  const long = (await store.createThread()).id;
  const [{ tenant }] = (
    await client.query<{ tenant: string }>(`select tenant_id::text as tenant from agent_thread where id = $1`, [short])
  ).rows as [{ tenant: string }];
  await client.exec(
    `insert into agent_thread (tenant_id, id) select '${tenant}', gen_random_uuid() from generate_series(3, ${threadCount})`,
  );
  await client.exec(`update agent_thread set next_sequence = ${messageCount} where id = '${long}';
    insert into agent_message (tenant_id, thread_id, sequence, message_id, role, parts, byte_size, token_count)
    select '${tenant}', '${long}', g, 'loaded-' || g, 'user',
      json_build_array(json_build_object('type', 'text', 'text', 'message ' || g)), 40, 3
    from generate_series(1, ${messageCount}) g`);

  let k = 0;
  const call = (thread: string) =>
    client.exec(
      dialect.sqlToQuery(statements.single(tenant, 'agent_history_app', benchAppendItem(factory.make(k++), thread)))
        .sql,
    );
  const cpuPerCall = async (thread: string) => {
    for (let warm = 0; warm < 20; warm++) await call(thread);
    const before = process.cpuUsage();
    for (let index = 0; index < CALLS; index++) await call(thread);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / CALLS;
  };
  const measure = async () => ({
    tenant: await cpuPerCall(short),
    thread: await cpuPerCall(long),
  });

  const without = await measure();
  const started = performance.now();
  await analyzeStaleTables(client, statements.tables);
  const upkeepMs = performance.now() - started;
  const withStatistics = await measure();
  console.log(
    `| append function on PGlite (CPU ms per call, ${CALLS} calls) | never analyzed | analyzed by the store | ratio |`,
  );
  console.log('| --- | --- | --- | --- |');
  const row = (label: string, before: number, after: number) =>
    console.log(`| ${label} | ${before.toFixed(3)} | ${after.toFixed(3)} | ${(before / after).toFixed(2)} |`);
  row(`a thread of a tenant of ${threadCount.toLocaleString('en')} threads`, without.tenant, withStatistics.tenant);
  row(
    `a thread of ${messageCount.toLocaleString('en')} messages, in that tenant`,
    without.thread,
    withStatistics.thread,
  );
  console.log(
    `\nThe store's upkeep (one catalog query, then ANALYZE of the tables that grew): ${upkeepMs.toFixed(0)} ms`,
  );
  await embedded.close();
}

runMain(main);
