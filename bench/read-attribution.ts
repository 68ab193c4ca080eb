// Where a newest-50 page's server time goes, in one run: a 2,000-message thread appended through the store (W1's
// payload), then the page read replayed inside the server (a procedure's loop, 1,000 calls per variant after 50 to
// warm up; each call's `parts` printed as text, as the protocol prints them) as the store reads it, then without what
// the function adds, then with fewer columns, then the bare peer's own read of the same rows from its table, whose
// `parts` is `json`. The backend's CPU from /proc and its elapsed time per call; every variant in every round, median.
//
//   npx tsx bench/read-attribution.ts        # BENCH_ATTRIBUTION_ROUNDS (3)
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { backendCpuMs } from './cpu.js';
import { MessageFactory } from './messages.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const rounds = Number(process.env.BENCH_ATTRIBUTION_ROUNDS ?? 3);
const CALLS = 1_000;

const COLUMNS =
  'm.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, ' +
  'm.role, m.status, m.parts, m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, ' +
  'm.content_version, m.byte_size, m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, ' +
  'm.created_at, m.updated_at, m.completed_at, m.redacted_at, m.deleted_at';

async function main() {
  const server = await startBenchServer();
  try {
    await server.createDatabase('read_attribution', { migrated: true });
    const client = postgres(server.appUrl('read_attribution'), { max: 4, onnotice: () => {} });
    const store = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase }).forTenant(
      randomUUID(),
    );
    const thread = (await store.createThread()).id;
    const factory = new MessageFactory({ seed: 42 });
    for (let wave = 0; wave < 40; wave++)
      await Promise.all(Array.from({ length: 50 }, (_, k) => store.appendMessage(thread, factory.make(wave * 50 + k))));
    await client.end();

    const admin = postgres(server.adminUrl('read_attribution'), { max: 1, onnotice: () => {} });
    // The bare INSERT peer's table (bench/peers/bare-insert-peer.ts), holding the same rows.
    await admin.unsafe(`create table raw_message as
      select id, thread_id, role::text as role, parts::json as parts, created_at from agent_message`);
    await admin.unsafe('create index on raw_message (thread_id, created_at)');
    await admin.unsafe('analyze');
    const tenant = store.tenantId;
    const functionArguments = `'${tenant}'::uuid, 'agent_history_app'::text, null::text, '${thread}'::uuid, null::bigint, 51, null::text[], false`;
    const variants: { name: string; query: string; printed: string }[] = [
      {
        name: 'the page as the store reads it on a server: `agent_history_list_messages` (tenant and role settings, thread check, RLS, 27 columns)',
        query: `select * from agent_history_list_messages(${functionArguments})`,
        printed: 'parts',
      },
      {
        name: 'the same rows by a plain SELECT as superuser (no function, no RLS), 27 columns',
        query: `select ${COLUMNS} from agent_message m where m.tenant_id = '${tenant}' and m.thread_id = '${thread}' and m.deleted_at is null order by m.sequence desc limit 51`,
        printed: 'parts',
      },
      {
        name: "the same rows, the bare peer's three columns (id, role, parts)",
        query: `select m.id, m.role, m.parts from agent_message m where m.tenant_id = '${tenant}' and m.thread_id = '${thread}' order by m.sequence desc limit 51`,
        printed: 'parts',
      },
      {
        name: "the bare peer's read of its own table (parts `json`: printed as stored)",
        query: `select id, role, parts from raw_message where thread_id = '${thread}' order by created_at desc, id desc limit 50`,
        printed: 'parts',
      },
      {
        name: 'for reference, `agent_history_list_messages_json` (the page as json arrays: the store uses it on PGlite)',
        query: `select * from agent_history_list_messages_json(${functionArguments})`,
        printed: 'data',
      },
    ];
    // Each call prints the column that carries the messages, as the protocol would; the rest are small.
    await admin.unsafe(`create procedure read_replay(p_query text, p_calls integer, inout ms float8)
      language plpgsql as $$
      declare started timestamptz; printed bigint;
      begin
        started := clock_timestamp();
        for i in 1..p_calls loop execute p_query into printed; commit; end loop;
        ms := extract(epoch from clock_timestamp() - started) * 1000;
      end $$`);
    const [{ pid }] = await admin.unsafe<{ pid: number }[]>('select pg_backend_pid() as pid');
    const samples = variants.map(() => ({ cpu: [] as number[], ms: [] as number[] }));
    console.log(
      `load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}; ${rounds} rounds of ${CALLS} calls`,
    );
    for (let round = 0; round < rounds; round++)
      for (const [index, variant] of variants.entries()) {
        const text = `select sum(length(x.${variant.printed}::text)) from (${variant.query}) x`;
        await admin.unsafe(`call read_replay($1, 50, null)`, [text]);
        const cpuBefore = backendCpuMs(pid!);
        const [row] = await admin.unsafe<{ ms: number }[]>(`call read_replay($1, ${CALLS}, null)`, [text]);
        samples[index]!.cpu.push((backendCpuMs(pid!) - cpuBefore) / CALLS);
        samples[index]!.ms.push(Number(row!.ms) / CALLS);
      }
    await admin.end();
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      '\n| read of the newest 50 (2,000-message thread) | server CPU ms per call, median (min–max) | elapsed ms |',
    );
    console.log('| --- | --- | --- |');
    for (const [index, variant] of variants.entries()) {
      const { cpu, ms } = samples[index]!;
      console.log(
        `| ${variant.name} | ${median(cpu).toFixed(3)} (${Math.min(...cpu).toFixed(3)}–${Math.max(...cpu).toFixed(3)}) | ${median(ms).toFixed(3)} |`,
      );
    }
  } finally {
    server.stop();
  }
}

runMain(main);
