// CPU per read, client and server, which does not depend on how loaded the machine is: agent-history's newest-50
// page and context load (as the app login, RLS on) against the same newest-50 read as one bare SELECT (superuser, no
// RLS) on the same table, on one seeded thread. `npx tsx bench/read-cost.ts` (BENCH_READ_SIZE, default 10,000).
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { cpuMeter, cpuPerOperation } from './cpu.js';
import { MessageFactory } from './messages.js';
import { openAgentHistory } from './peers/agent-history-peer.js';
import { startBenchServer } from './server.js';
import { loadTemplates, seedAgentHistoryThreads, type AdminQuery } from './workloads/w3-agent-history.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';

const size = Number(process.env.BENCH_READ_SIZE ?? 10_000);
const calls = Number(process.env.BENCH_READ_CALLS ?? 300);

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  try {
    await server.createDatabase('bench_read', { migrated: true });
    const sql = postgres(server.adminUrl('bench_read'), { max: 1, onnotice: () => {} });
    const admin: AdminQuery = (text, params) => sql.unsafe(text, params as never[]) as never;
    const ah = openAgentHistory(server.appUrl('bench_read'), 1);
    await loadTemplates(admin, new MessageFactory({ seed: 42 }));
    const [thread] = await seedAgentHistoryThreads({ store: ah.store, admin, sizes: [size], snapshotTail: 8 });
    const threadId = thread!.threadId;
    // The same store inside a caller's transaction reads the transactional way (BEGIN, settings, queries, COMMIT).
    const inTransaction = (work: (store: typeof ah.store) => Promise<unknown>) =>
      (drizzle({ client: ah.client }) as unknown as AgentHistoryDatabase).transaction((tx) =>
        work(createAgentHistory({ db: tx }).forTenant(ah.tenantId)),
      );
    const meter = cpuMeter(await server.postmasterPid());
    const operations: Array<[string, () => Promise<unknown>]> = [
      [
        'bare SELECT newest 50 (superuser, no RLS)',
        () =>
          sql`select id, message_id, role, parts, metadata, sequence from agent_message where tenant_id = ${ah.tenantId} and thread_id = ${threadId}
            order by sequence desc limit 50`,
      ],
      ['listMessages newest 50, one statement', () => ah.store.listMessages(threadId)],
      [
        'listMessages newest 50, in a transaction (before 0013)',
        () => inTransaction((store) => store.listMessages(threadId)),
      ],
      ['loadContext (snapshot + 8-message tail), one statement', () => ah.store.loadContext(threadId)],
      ['loadContext, in a transaction (before 0013)', () => inTransaction((store) => store.loadContext(threadId))],
    ];
    for (const [, operation] of operations) for (let index = 0; index < 20; index++) await operation();
    console.log(
      `| read, thread of ${size} messages | client CPU ms | server CPU ms | wall ms per call (noisy) |\n| --- | --- | --- | --- |`,
    );
    for (const [label, operation] of operations) {
      const before = await meter();
      const started = performance.now();
      for (let index = 0; index < calls; index++) await operation();
      const wall = (performance.now() - started) / calls;
      const cost = cpuPerOperation(before, await meter(), calls);
      console.log(`| ${label} | ${cost.clientMs} | ${cost.serverMs} | ${wall.toFixed(2)} |`);
    }
    await ah.client.end({ timeout: 5 });
    await sql.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
