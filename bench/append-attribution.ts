// What each guarantee of an append costs the server, in one run: the statements the store really sends for W1's
// payload are captured once, then replayed inside the server (a procedure's loop of EXECUTE and COMMIT, no network) on databases that each take away one more piece, cumulatively, down to the same statement
// writing a bare row. The server time of the statement itself, per append, and its WAL bytes; every variant in every
// round, interleaved, median of the rounds. Also W2's shape: batches of 32 messages to one thread.
//
//   npx tsx bench/append-attribution.ts        # BENCH_APPEND_COUNT counted statements (1,000, after as many to warm up), BENCH_ATTRIBUTION_ROUNDS (5)
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { capturedThreads, countMessages, replayInServer, type ReplaySample } from './in-server-replay.js';
import { MessageFactory } from './messages.js';
import { BARE_DDL } from './peers/bare-insert-peer.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 1_000);
const rounds = Number(process.env.BENCH_ATTRIBUTION_ROUNDS ?? 5);
const THREADS = 50;

const SINGLE =
  'agent_history_append_message(uuid, text, uuid, text, text, agent_message_role, agent_message_status, json, ' +
  'jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean, boolean, text)';
const ARGUMENTS =
  'p_tenant_id uuid, p_role_name text, p_thread_id uuid, p_message_id text, p_client_request_id text, ' +
  'p_role agent_message_role, p_status agent_message_status, p_parts json, p_metadata jsonb, p_run_id uuid, ' +
  'p_byte_size integer, p_token_count integer, p_token_counter_id text, p_part_token_counts integer[], ' +
  'p_lease_expires_at timestamptz, p_pinned boolean, p_defer_search boolean DEFAULT false, p_user_id text DEFAULT NULL';
const RESULT =
  'inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid, ' +
  'role agent_message_role, status agent_message_status, parts json, metadata jsonb, ' +
  'context_state agent_message_context_state, pinned boolean, byte_size integer, token_count integer, ' +
  'token_counter_id text, part_token_counts integer[], content_version integer, lease_expires_at timestamptz, ' +
  'created_at timestamptz, updated_at timestamptz, completed_at timestamptz';

/** Each step takes one more piece away from the one before (DDL run as the superuser before the replay). */
const STEPS: { name: string; ddl: string[] }[] = [
  { name: 'as shipped (search inline, forced RLS, idempotency, foreign keys, 11 indexes)', ddl: [] },
  {
    name: '− the GIN index of the search vector (the vector is still computed and stored)',
    ddl: ['drop index agent_message_search_idx'],
  },
  {
    name: '− the search vector itself (its trigger, and the index of rows without one)',
    ddl: ['drop trigger agent_message_search_vector on agent_message', 'drop index agent_message_search_pending_idx'],
  },
  {
    name: '− row-level security (both tables)',
    ddl: [
      'alter table agent_message disable row level security',
      'alter table agent_thread disable row level security',
    ],
  },
  {
    name: '− idempotency (the look-up and the message-id and request-id unique indexes)',
    ddl: [
      // The look-up's WHERE clause made false; a function worded otherwise fails here rather than measure nothing.
      `do $$ declare body text := pg_get_functiondef('${SINGLE}'::regprocedure); begin
         if position('WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id' in body) = 0 then
           raise exception 'the single append no longer has the look-up this step removes';
         end if;
         execute replace(body, 'WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id', 'WHERE false'); end $$`,
      'drop index agent_message_thread_message_id_uidx',
      'drop index agent_message_client_request_uidx',
    ],
  },
  {
    name: '− the three foreign keys',
    ddl: [
      'alter table agent_message drop constraint agent_message_thread_fk',
      'alter table agent_message drop constraint agent_message_run_fk',
      'alter table agent_message drop constraint agent_message_thread_user_fk',
    ],
  },
  {
    name: '− the partial indexes (run, lease, pinned, fork source)',
    ddl: [
      'drop index agent_message_run_idx',
      'drop index agent_message_streaming_lease_idx',
      'drop index agent_message_pinned_idx',
      'drop index agent_message_source_idx',
    ],
  },
  {
    name: '− the gapless sequence (thread row update) and PL/pgSQL: one SQL INSERT … RETURNING',
    ddl: [
      'create sequence attribution_sequence',
      `create or replace function ${SINGLE.replace(/\(.*/, '')}(${ARGUMENTS}) returns table (${RESULT})
       language sql as $$
         insert into agent_message as m (tenant_id, thread_id, sequence, message_id, client_request_id, run_id, role,
           status, parts, metadata, pinned, byte_size, token_count, token_counter_id, part_token_counts,
           lease_expires_at, completed_at)
         values (p_tenant_id, p_thread_id, nextval('attribution_sequence'), p_message_id, p_client_request_id, p_run_id,
           p_role, p_status, p_parts, p_metadata, p_pinned, p_byte_size, p_token_count, p_token_counter_id,
           p_part_token_counts, p_lease_expires_at, now())
         returning true, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status, null::json,
           null::jsonb, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.part_token_counts,
           m.content_version, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at $$`,
    ],
  },
  {
    name: "bare: the same statement writes the bare INSERT peer's row (id, thread, role, parts json, created_at)",
    ddl: [
      ...BARE_DDL,
      `drop function ${SINGLE}`,
      `create function ${SINGLE.replace(/\(.*/, '')}(${ARGUMENTS}) returns void language sql as $$
         insert into raw_message (id, thread_id, role, parts) values (gen_random_uuid(), p_thread_id, p_role::text,
           p_parts::json) $$`,
    ],
  },
];

async function main() {
  const server = await startBenchServer();
  const factory = new MessageFactory({ seed: 42 });
  try {
    // 1. Capture: the store as the README uses it (app login, forced RLS), no write combining for the singles.
    await server.createDatabase('attribution_capture', { migrated: true });
    const singles: string[] = [];
    const batches: string[] = [];
    let phase: 'singles' | 'batches' = 'singles';
    const client = postgres(server.appUrl('attribution_capture'), {
      max: 8,
      onnotice: () => {},
      debug: (_connection: number, query: string) => {
        if (phase === 'singles' && query.includes('agent_history_append_message(')) singles.push(query);
        // A wave's first append goes alone (nothing to combine it with yet): only the combined statements count.
        if (phase === 'batches' && query.includes('agent_history_append_messages(')) batches.push(query);
      },
    });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    const tenantId = randomUUID();
    const alone = createAgentHistory({ db, appendBatching: false }).forTenant(tenantId);
    const threads: string[] = [];
    for (let index = 0; index < THREADS; index++) threads.push((await alone.createThread()).id);
    for (let k = 0; k < 2 * count; k++) await alone.appendMessage(threads[k % THREADS]!, factory.make(k));
    phase = 'batches';
    // W2's shape: 32 appenders on one thread; the store combines them (one statement in flight per thread).
    const combined = createAgentHistory({ db, appendBatching: { maxBatchSize: 32 } }).forTenant(tenantId);
    const hot = (await combined.createThread()).id;
    for (let wave = 0; wave < Math.ceil((2 * count) / 32); wave++)
      await Promise.all(
        Array.from({ length: 32 }, (_, k) => combined.appendMessage(hot, factory.make(100_000 + wave * 32 + k))),
      );
    await client.end();
    const batchedMessages = countMessages(batches);
    const threadRows = await capturedThreads(server, 'attribution_capture');

    const replay = (ddl: string[], statements: string[]): Promise<ReplaySample> =>
      replayInServer(server, {
        database: 'attribution_replay',
        threads: threadRows,
        statements,
        prepare: async (admin) => {
          for (const statement of ddl) await admin.unsafe(statement);
        },
      });

    const cases = [
      ...STEPS.map((step, index) => ({
        name: step.name,
        ddl: STEPS.slice(0, index + 1).flatMap((taken) => taken.ddl),
        statements: singles,
        messages: singles.length - Math.floor(singles.length / 2),
      })),
      {
        name: 'W2 shape: the batch function, 32 messages to one thread per statement',
        ddl: [],
        statements: batches,
        messages: countMessages(batches.slice(Math.floor(batches.length / 2))),
      },
    ];
    const samples: ReplaySample[][] = cases.map(() => []);
    console.log(
      `load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}; ${singles.length} single statements, ` +
        `${batches.length} batch statements holding ${batchedMessages} messages; ${rounds} rounds`,
    );
    for (let round = 0; round < rounds; round++)
      for (const [index, item] of cases.entries()) samples[index]!.push(await replay(item.ddl, item.statements));

    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      '\n| step (cumulative) | server CPU ms per append, median (min–max) | this step takes away | elapsed ms per append | WAL B per append |',
    );
    console.log('| --- | --- | --- | --- | --- |');
    let previous: number | undefined;
    for (const [index, item] of cases.entries()) {
      const cpu = samples[index]!.map((sample) => sample.cpuMs / item.messages);
      const value = median(cpu);
      const elapsed = median(samples[index]!.map((sample) => sample.ms / item.messages));
      const wal = median(samples[index]!.map((sample) => sample.wal / item.messages));
      const step = index > 0 && index < STEPS.length && previous !== undefined ? (previous - value).toFixed(3) : '–';
      const range = `${Math.min(...cpu).toFixed(3)}–${Math.max(...cpu).toFixed(3)}`;
      console.log(
        `| ${item.name} | ${value.toFixed(3)} (${range}) | ${step} | ${elapsed.toFixed(3)} | ${Math.round(wal)} |`,
      );
      if (index < STEPS.length) previous = value;
    }
  } finally {
    server.stop();
  }
}

runMain(main);
