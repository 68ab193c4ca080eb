// CPU per read, client and server, which does not depend on how loaded the machine is, and wall time, each as a ratio
// to W3's bare read (the bare peer's own table: id, role and parts of the newest 50, superuser, no RLS): a chat
// window's page (`listChatMessages`) through the store and by its function (prepared, and as literals); the guarded
// floors (a UIMessage's columns, and the six columns a bare SELECT of agent_message reads, through a plpgsql function
// under forced RLS as the app login, nothing else); bare SELECTs of agent_message (six columns, and the 27 a page of
// `listMessages` returns); that page's own function, of all its columns and of fewer; `listMessages`, `loadContext`
// and both in a caller's transaction; and the whole thread read every way, against W3's bare read of it; all in
// interleaved rounds.
// `npx tsx bench/read-cost.ts` (BENCH_READ_SIZE, default 10,000; BENCH_READ_ROUNDS, default 3).
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { sql as drizzleSql } from 'drizzle-orm';
import { cpuMeter } from './cpu.js';
import { MessageFactory } from './messages.js';
import { loadWholeChat, loadWholeThread, openAgentHistory } from './peers/agent-history-peer.js';
import { startBenchServer } from './server.js';
import {
  createGuardedChatPage,
  loadTemplates,
  seedAgentHistoryThreads,
  type AdminQuery,
} from './workloads/w3-agent-history.js';
import { BARE_DDL } from './peers/bare-insert-peer.js';
import { seedBareThreads } from './workloads/w3-peers.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const size = Number(process.env.BENCH_READ_SIZE ?? 10_000);
const calls = Number(process.env.BENCH_READ_CALLS ?? 300);
const wholeCalls = Number(process.env.BENCH_READ_WHOLE_CALLS ?? 10);
const rounds = Number(process.env.BENCH_READ_ROUNDS ?? 3);

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  try {
    await server.createDatabase('bench_read', { migrated: true });
    const sql = postgres(server.adminUrl('bench_read'), { max: 1, onnotice: () => {} });
    const admin: AdminQuery = (text, params) => sql.unsafe(text, params as never[]) as never;
    const ah = openAgentHistory(server.appUrl('bench_read'), 1);
    const factory = new MessageFactory({ seed: 42 });
    await loadTemplates(admin, factory);
    const [thread] = await seedAgentHistoryThreads({ store: ah.store, admin, sizes: [size], snapshotTail: 8 });
    const threadId = thread!.threadId;
    // The same store inside a caller's transaction reads the transactional way (BEGIN, settings, queries, COMMIT):
    // derived from the store (`withTransaction`), or made anew on the transaction, which checks the setup again.
    const caller = drizzle({ client: ah.client }) as unknown as AgentHistoryDatabase;
    const inTransaction = (work: (store: typeof ah.store) => Promise<unknown>) =>
      caller.transaction((tx) => work(ah.history.withTransaction(tx).forTenant(ah.tenantId)));
    const inNewStore = (work: (store: typeof ah.store) => Promise<unknown>) =>
      caller.transaction((tx) => work(createAgentHistory({ db: tx }).forTenant(ah.tenantId)));
    // The floor of a read under the guarantees: forced row-level security as the app login, in one statement (a
    // plpgsql function that sets the tenant and the role for its transaction, as the store's read functions do),
    // the bare peer's six columns, no check that the thread is visible, no mapping on the client. enable_sort off for
    // its run, as the store's functions: the policy's user clause leaves the planner no estimate of the thread's rows,
    // and without it the plan sorts the whole thread (11 ms a call on 10,000 messages).
    await sql.unsafe(`create function guarded_page(p_tenant uuid, p_thread uuid)
      returns table (id uuid, message_id text, role text, parts json, metadata jsonb, sequence bigint)
      language plpgsql set enable_sort = off as $$
      begin
        perform set_config('app.tenant_id', p_tenant::text, true);
        perform set_config('app.user_id', '', true);
        perform set_config('role', 'agent_history_app', true);
        return query select m.id, m.message_id, m.role::text, m.parts, m.metadata, m.sequence from agent_message m
          where m.tenant_id = p_tenant and m.thread_id = p_thread and m.deleted_at is null
          order by m.sequence desc limit 50;
      end $$`);
    await sql.unsafe(`grant execute on function guarded_page(uuid, uuid) to agent_history_app`);
    // The same floor for a chat window's page, as W3 reads it: a UIMessage's columns and its sequence.
    await createGuardedChatPage(admin);
    // W3's bare peer: its own table (id, thread, role, parts, time) in a database of its own, seeded with the same
    // payloads, as W3 seeds it.
    await server.createDatabase('bench_read_bare');
    const bare = postgres(server.adminUrl('bench_read_bare'), { max: 1, onnotice: () => {} });
    for (const statement of BARE_DDL) await bare.unsafe(statement);
    const [bareThread] = await seedBareThreads(bare, factory, [size]);
    const meter = cpuMeter(await server.postmasterPid());
    const operations: Array<[string, () => Promise<unknown>, number?]> = [
      [
        "W3's bare read: id, role, parts of the bare peer's table, newest 50 (superuser, no RLS)",
        () =>
          bare`select id, role, parts from raw_message where thread_id = ${bareThread!.threadId}
            order by created_at desc, id desc limit 50`,
      ],
      [
        "guarded floor of a chat window's page: a UIMessage's columns and its sequence under forced RLS, one plpgsql function",
        () => ah.client`select * from bench_guarded_chat_page(${ah.tenantId}, ${threadId})`,
      ],
      [
        'bare SELECT newest 50 (superuser, no RLS)',
        () =>
          sql`select id, message_id, role, parts, metadata, sequence from agent_message where tenant_id = ${ah.tenantId} and thread_id = ${threadId}
            order by sequence desc limit 50`,
      ],
      [
        'bare SELECT newest 50 of the 27 columns listMessages returns (superuser, no RLS)',
        () =>
          sql`select id, thread_id, user_id, run_id, sequence, message_id, client_request_id, source_message_id, role,
            status, parts, metadata, context_state, exclusion_reason, pinned, schema_version, content_version, byte_size,
            token_count, token_counter_id, part_token_counts, lease_expires_at, created_at, updated_at, completed_at,
            redacted_at, deleted_at from agent_message where tenant_id = ${ah.tenantId} and thread_id = ${threadId}
            and deleted_at is null order by sequence desc limit 50`,
      ],
      [
        'guarded floor: the six columns under forced RLS as the app login, one plpgsql function',
        () => ah.client`select * from guarded_page(${ah.tenantId}, ${threadId})`,
      ],
      [
        "the page's own function called bare: 27 columns, RLS, the thread check, no mapping",
        () =>
          ah.client`select * from agent_history_list_messages(${ah.tenantId}, 'agent_history_app', null, ${threadId},
            null, 51, null, false)`,
      ],
      [
        "the page's own function, only the columns of a UIMessage and its sequence, no mapping",
        () =>
          ah.client`select id, message_id, role, parts, metadata, sequence, schema_version
            from agent_history_list_messages(${ah.tenantId}, 'agent_history_app', null, ${threadId}, null, 51, null, false)`,
      ],
      [
        "the page's own function, a chat window's columns (UIMessage, sequence, status, state, time), no mapping",
        () =>
          ah.client`select message_id, role, parts, metadata, schema_version, sequence, status, context_state,
            exclusion_reason, created_at
            from agent_history_list_messages(${ah.tenantId}, 'agent_history_app', null, ${threadId}, null, 51, null, false)`,
      ],
      [
        'the same, one statement of literals through Drizzle (as the store sends it), no mapping',
        () =>
          caller.execute(
            drizzleSql.raw(`select message_id, role, parts, metadata, schema_version, sequence, status, context_state,
            exclusion_reason, created_at from agent_history_list_messages('${ah.tenantId}'::uuid, 'agent_history_app',
            null, '${threadId}'::uuid, null, 51, null, false)`),
          ),
      ],
      [
        "a chat window's page by its function (the 10 columns, the thread check in the query), prepared, no mapping",
        () =>
          ah.client`select * from agent_history_list_chat_messages(${ah.tenantId}, 'agent_history_app', null,
            ${threadId}, null, 51, false)`,
      ],
      [
        'that function, one statement of literals through Drizzle, no mapping',
        () =>
          caller.execute(
            drizzleSql.raw(`select * from agent_history_list_chat_messages('${ah.tenantId}'::uuid, 'agent_history_app',
              null, '${threadId}'::uuid, null, 51, false)`),
          ),
      ],
      ['listChatMessages newest 50 (the store: prepared, mapped)', () => ah.store.listChatMessages(threadId)],
      [
        'the same page as json (the form the store reads on PGlite), parsed, no mapping',
        async () =>
          (
            await ah.client<{ data: unknown[] }[]>`select data from agent_history_list_messages_json(${ah.tenantId},
              'agent_history_app', null, ${threadId}, null, 51, null, false)`
          ).flatMap((row) => row.data),
      ],
      ['listMessages newest 50, one statement', () => ah.store.listMessages(threadId)],
      [
        'listMessages newest 50, in a transaction (as on Citus), withTransaction(tx)',
        () => inTransaction((store) => store.listMessages(threadId)),
      ],
      [
        'listMessages newest 50, in a transaction, createAgentHistory({ db: tx }) per transaction',
        () => inNewStore((store) => store.listMessages(threadId)),
      ],
      ['loadContext (snapshot + 8-message tail), one statement', () => ah.store.loadContext(threadId)],
      [
        'loadContext, in a transaction (as on Citus), withTransaction(tx)',
        () => inTransaction((store) => store.loadContext(threadId)),
      ],
      [
        `W3's bare read of the whole thread (${size} rows, one query, the bare peer's table)`,
        () =>
          bare`select id, role, parts from raw_message where thread_id = ${bareThread!.threadId} order by created_at, id`,
        wholeCalls,
      ],
      [
        `bare SELECT of the whole thread (${size} rows, one query)`,
        () =>
          sql`select id, message_id, role, parts, metadata, sequence from agent_message where tenant_id = ${ah.tenantId} and thread_id = ${threadId}
            order by sequence`,
        wholeCalls,
      ],
      ['whole thread, listMessages pages of 500', () => loadWholeThread(ah.store, threadId), wholeCalls],
      ['whole thread, listChatMessages pages of 500', () => loadWholeChat(ah.store, threadId), wholeCalls],
    ];
    for (const [, operation, count = calls] of operations)
      for (let index = 0; index < Math.min(20, count); index++) await operation();
    // Rounds interleave the operations, so a burst of load on the shared machine falls on all of them alike; the
    // table sums every round (CPU per call does not depend on load; wall times do).
    const totals = operations.map(() => ({ clientMs: 0, serverMs: 0, wallMs: 0, calls: 0 }));
    for (let round = 0; round < rounds; round++) {
      for (const [index, [, operation, count = calls]] of operations.entries()) {
        const before = await meter();
        for (let call = 0; call < count; call++) await operation();
        const after = await meter();
        const total = totals[index]!;
        total.clientMs += after.clientMs - before.clientMs;
        total.serverMs += after.serverMs - before.serverMs;
        total.wallMs += after.wallMs - before.wallMs;
        total.calls += count;
      }
    }
    console.log(
      `load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}, ${rounds} rounds`,
    );
    console.log(
      `| read, thread of ${size} messages | client CPU ms | server CPU ms | CPU ÷ W3's bare read | wall ms per call (noisy) | wall ÷ W3's bare read |\n| --- | --- | --- | --- | --- | --- |`,
    );
    // A page against W3's bare page read, a whole thread against W3's bare read of the whole thread.
    const wholeBase = operations.findIndex(([label]) => label.startsWith("W3's bare read of the whole thread"));
    for (const [index, [label, , count = calls]] of operations.entries()) {
      const { clientMs, serverMs, wallMs, calls: done } = totals[index]!;
      const base = totals[count === wholeCalls ? wholeBase : 0]!;
      const baseCpu = (base.clientMs + base.serverMs) / base.calls;
      const baseWall = base.wallMs / base.calls;
      const per = (value: number) => (value / done).toFixed(3);
      const cpu = (clientMs + serverMs) / done;
      console.log(
        `| ${label} | ${per(clientMs)} | ${per(serverMs)} | ${(cpu / baseCpu).toFixed(2)} | ${per(wallMs)} | ${(wallMs / done / baseWall).toFixed(2)} |`,
      );
    }
    await ah.client.end({ timeout: 5 });
    await sql.end({ timeout: 5 });
    await bare.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

runMain(main);
