// What the store's batch append costs the server per message in W1's shape, and what each piece of it adds: the
// batch statements the store really sends for W1 (8 appenders on 50 threads, write combining at its defaults) are
// captured once, then replayed inside the server (a procedure's loop of EXECUTE and COMMIT, no network) on fresh
// databases that each change one thing: the function edited, or an index, a trigger or the foreign keys dropped.
// Server CPU, elapsed time and WAL bytes per message, every variant in every round, interleaved, median of the rounds.
//
//   npx tsx bench/batch-append-variants.ts   # BENCH_ATTRIBUTION_ROUNDS (3), BENCH_PER_THREAD messages per thread (80)
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { capturedThreads, countMessages, replayInServer } from './in-server-replay.js';
import { MessageFactory } from './messages.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const rounds = Number(process.env.BENCH_ATTRIBUTION_ROUNDS ?? 3);
const THREADS = 50;
const PER_THREAD = Number(process.env.BENCH_PER_THREAD ?? 80);
const BATCH_FN = 'agent_history_append_messages(uuid, text, jsonb, json, boolean, text)';

type Variant = { name: string; edit: (body: string) => string; ddl?: string[] };
const must = (body: string, from: string | RegExp, to: string) => {
  const next = body.replace(from, to);
  if (next === body) throw new Error(`variant edit did not apply: ${String(from).slice(0, 80)}`);
  return next;
};
const VARIANTS: Variant[] = [
  { name: 'as shipped', edit: (body) => body },
  {
    name: 'without the pre-lock of the threads',
    edit: (body) => must(body, /IF \(SELECT count\(DISTINCT[\s\S]*?END IF;\n  IF NOT EXISTS/, 'IF NOT EXISTS'),
  },
  {
    name: 'look-up by message id only',
    edit: (body) =>
      must(
        body,
        `AND (m.message_id = i."messageId"
              OR (i."clientRequestId" IS NOT NULL AND m.client_request_id = i."clientRequestId"))`,
        'AND m.message_id = i."messageId"',
      ),
  },
  {
    name: 'answer trimmed to the ids and sequences',
    edit: (body) =>
      must(
        body,
        `RETURNING m.thread_id, m.message_id, m.id, m.sequence, m.client_request_id, m.run_id, m.role, m.status,
          m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
          m.lease_expires_at, m.created_at, m.updated_at, m.completed_at`,
        `RETURNING m.thread_id, m.message_id, m.id, m.sequence, null::text AS client_request_id,
          null::uuid AS run_id, null::"public"."agent_message_role" AS role,
          null::"public"."agent_message_status" AS status,
          null::"public"."agent_message_context_state" AS context_state, null::boolean AS pinned,
          null::integer AS byte_size, null::integer AS token_count, null::text AS token_counter_id,
          null::integer AS content_version, null::timestamptz AS lease_expires_at, null::timestamptz AS created_at,
          null::timestamptz AS updated_at, null::timestamptz AS completed_at`,
      ),
  },
  {
    name: 'without the message-id unique index',
    edit: (body) => body,
    ddl: ['drop index agent_message_thread_message_id_uidx'],
  },
  {
    name: 'without the foreign keys',
    edit: (body) => body,
    ddl: ['thread_fk', 'thread_user_fk', 'run_fk'].map(
      (name) => `alter table agent_message drop constraint agent_message_${name}`,
    ),
  },
  {
    name: 'without the search vector (its trigger)',
    edit: (body) => body,
    ddl: ['drop trigger agent_message_search_vector on agent_message'],
  },
  { name: 'as shipped (again)', edit: (body) => body },
];

async function main() {
  const server = await startBenchServer();
  const factory = new MessageFactory({ seed: 42 });
  try {
    await server.createDatabase('batch_variants_capture', { migrated: true });
    const batches: string[] = [];
    const client = postgres(server.appUrl('batch_variants_capture'), {
      max: 8,
      onnotice: () => {},
      debug: (_c: number, query: string) => {
        if (query.includes('agent_history_append_messages(')) batches.push(query);
      },
    });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    const store = createAgentHistory({ db }).forTenant(randomUUID());
    const threads: string[] = [];
    for (let index = 0; index < THREADS; index++) threads.push((await store.createThread()).id);
    let next = 0;
    const total = THREADS * PER_THREAD;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < total) {
          const k = next++;
          await store.appendMessage(threads[k % THREADS]!, factory.make(k));
        }
      }),
    );
    await client.end();
    console.log(`${batches.length} batches, ${countMessages(batches)} messages of ${total}`);
    const threadRows = await capturedThreads(server, 'batch_variants_capture');
    const counted = countMessages(batches.slice(Math.floor(batches.length / 2)));
    const replay = async (variant: Variant) => {
      const sample = await replayInServer(server, {
        database: 'batch_variants_replay',
        threads: threadRows,
        statements: batches,
        prepare: async (admin) => {
          const [{ def }] = await admin.unsafe<{ def: string }[]>(
            `select pg_get_functiondef('${BATCH_FN}'::regprocedure) as def`,
          );
          const edited = variant.edit(def!);
          if (edited !== def) await admin.unsafe(edited);
          for (const statement of variant.ddl ?? []) await admin.unsafe(statement);
        },
      });
      return { cpu: sample.cpuMs / counted, ms: sample.ms / counted, wal: sample.wal / counted };
    };
    console.log(
      `load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}; ${rounds} rounds`,
    );
    const samples = VARIANTS.map(() => [] as { cpu: number; ms: number; wal: number }[]);
    for (let round = 0; round < rounds; round++)
      for (const [index, variant] of VARIANTS.entries()) samples[index]!.push(await replay(variant));
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      '\n| variant | server CPU ms per message, median (min–max) | elapsed ms per message | WAL B per message |',
    );
    console.log('| --- | --- | --- | --- |');
    for (const [index, variant] of VARIANTS.entries()) {
      const cpu = samples[index]!.map((sample) => sample.cpu);
      const range = `${Math.min(...cpu).toFixed(3)}–${Math.max(...cpu).toFixed(3)}`;
      const elapsed = median(samples[index]!.map((sample) => sample.ms));
      const wal = Math.round(median(samples[index]!.map((sample) => sample.wal)));
      console.log(`| ${variant.name} | ${median(cpu).toFixed(3)} (${range}) | ${elapsed.toFixed(3)} | ${wal} |`);
    }
  } finally {
    server.stop();
  }
}

runMain(main);
