// Where a PGlite append's time goes. PGlite is Postgres compiled to WASM, running single-threaded in this process,
// so every piece is this process's CPU (`process.cpuUsage`). Each piece is timed alone, one call at a time: the JS
// side (validation, exact token counting), PGlite's cost per statement, then a ladder of SQL variants run directly
// on the migrated schema, from a bare INSERT of the same payload up to `store.appendMessage`, each step adding one
// part of the append; then `EXPLAIN (ANALYZE)` of the append's body as the application role (trigger and
// foreign-key times). Variants are interleaved over BENCH_PROFILE_ROUNDS rounds (default 5) and the median per
// call is printed, so a busy machine skews them alike. `npx tsx bench/pglite-append-profile.ts`
// (BENCH_PROFILE_COUNT calls per variant and round, default 200).
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { PgDialect } from 'drizzle-orm/pg-core';
import { benchAppendItem } from './append-item.js';
import { MessageFactory } from './messages.js';
import { openEmbedded } from './workloads/w5-embedded.js';
import { appendStatements, type AppendItem } from '../src/store/append-statements.js';
import { defineAgentTables } from '../src/schema/define-agent-tables.js';
import { validateMessage } from '../src/store/validate-message.js';
import { countStoredMessageTokens } from '../src/tokens/count-stored-message-tokens.js';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import type { ContextUIMessage } from '../src/model/context-ui-message.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_PROFILE_COUNT ?? 200);
const rounds = Number(process.env.BENCH_PROFILE_ROUNDS ?? 5);
const THREADS = 50;

type Variant = [label: string, operation: (k: number) => unknown];

/** Median CPU ms per call of each variant, the variants interleaved round by round. */
async function measure(variants: Variant[]): Promise<Map<string, number>> {
  const samples = new Map<string, number[]>(variants.map(([label]) => [label, []]));
  let k = 0;
  for (const [, operation] of variants) for (let warm = 0; warm < 30; warm++) await operation(k++);
  for (let round = 0; round < rounds; round++) {
    for (const [label, operation] of variants) {
      const before = process.cpuUsage();
      for (let call = 0; call < count; call++) await operation(k++);
      const used = process.cpuUsage(before);
      samples.get(label)!.push((used.user + used.system) / 1000 / count);
    }
  }
  const medians = new Map<string, number>();
  for (const [label, values] of samples) medians.set(label, values.sort((a, b) => a - b)[values.length >> 1]!);
  return medians;
}

async function main() {
  const embedded = await openEmbedded();
  const { client } = embedded;
  const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
  const factory = new MessageFactory({ seed: 42 });
  const statements = appendStatements(defineAgentTables());
  const dialect = new PgDialect();
  const counter = await loadO200kTokenCounter();
  const store = embedded.tenant();
  const threads: string[] = [];
  for (let index = 0; index < THREADS; index++) threads.push((await store.createThread()).id);
  const [{ tenant }] = (
    await client.query<{ tenant: string }>(`select tenant_id::text as tenant from agent_thread where id = $1`, [
      threads[0],
    ])
  ).rows as [{ tenant: string }];
  const thread = (k: number) => threads[k % THREADS]!;
  const item = (k: number): AppendItem => benchAppendItem(factory.make(k), thread(k));
  const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const callText = (k: number, appRole: string | null) =>
    dialect.sqlToQuery(statements.single(tenant, appRole, item(k))).sql;
  const superuser = (prefix: string, body: string) => client.exec(`${prefix}${body}`);
  const deferred = `select set_config('agent_history.search', 'deferred', true);`;
  const asApp = `select set_config('app.tenant_id', '${tenant}', true), set_config('role', 'agent_history_app', true);`;
  // The message row alone, its sequence from JS (one statement, no thread update).
  let nextSequence = 1_000_000;
  const insertOnly = (k: number) => {
    const it = item(k);
    return `insert into agent_message (tenant_id, thread_id, sequence, message_id, role, status, parts, metadata,
        pinned, byte_size, token_count, token_counter_id, completed_at)
      values ('${tenant}', '${it.threadId}', ${nextSequence++}, ${quote(it.messageId)}, 'user', 'completed',
        ${quote(it.partsJson)}, ${quote(it.metadataJson)}, false, ${it.byteSize}, 100, 'o', now())`;
  };
  // The append's body: the thread's next sequence taken with the insert (the function's second statement).
  const slotInsert = (k: number) => {
    const it = item(k);
    return `with slot as (
        update agent_thread t set next_sequence = t.next_sequence + 1, last_message_at = now(), updated_at = now()
        where t.tenant_id = '${tenant}' and t.id = '${it.threadId}' and t.deleted_at is null
        returning t.next_sequence, t.user_id)
      insert into agent_message as m (tenant_id, thread_id, user_id, sequence, message_id, role, status, parts, metadata,
        pinned, byte_size, token_count, token_counter_id, completed_at)
      select '${tenant}', '${it.threadId}', slot.user_id, slot.next_sequence, ${quote(it.messageId)}, 'user',
        'completed', ${quote(it.partsJson)}, ${quote(it.metadataJson)}, false, ${it.byteSize}, 100, 'o', now() from slot
      returning m.id, m.sequence`;
  };
  const messages = Array.from({ length: 512 }, (_, k) => factory.make(k));
  const jsSide = await measure([
    ['JS: validateMessage', (k) => validateMessage(messages[k % 512]!, { maxBytes: 1_048_576 })],
    [
      'JS: exact o200k token count of a new message',
      (k) =>
        countStoredMessageTokens({ message: factory.make(k) as unknown as ContextUIMessage, tokenCounter: counter }),
    ],
    ['PGlite: exec (simple protocol) of `select 1`', () => client.exec('select 1')],
    ['PGlite: query (extended protocol) of `select 1`', () => client.query('select 1')],
    ['PGlite: Drizzle execute of `select 1`', () => db.execute(sql`select 1`)],
  ]);
  const ladder = await measure([
    [
      '1. bare INSERT (raw_message, query with parameters)',
      (k) => {
        const message = factory.make(k);
        return client.query(`insert into raw_message (id, thread_id, role, parts) values ($1, $2, $3, $4)`, [
          message.id,
          thread(k),
          message.role,
          JSON.stringify(message.parts),
        ]);
      },
    ],
    ['2. INSERT into agent_message, search deferred, sequence given', (k) => superuser(deferred, insertOnly(k))],
    ['3. + the thread UPDATE taking the sequence (CTE)', (k) => superuser(deferred, slotInsert(k))],
    ['4. + search vector inline (trigger + GIN entry)', (k) => superuser('', slotInsert(k))],
    ['5. + RLS as the app role (set_config tenant, role)', (k) => superuser(asApp, slotInsert(k))],
    [
      '6. the append function instead (+ idempotency SELECT, plpgsql)',
      (k) => client.exec(callText(k, 'agent_history_app')),
    ],
    [
      '7. the same statement through Drizzle (extended protocol)',
      (k) => db.execute(sql.raw(callText(k, 'agent_history_app'))),
    ],
    [
      '8. store.appendMessage (+ validation, token count, batcher, result)',
      (k) => store.appendMessage(thread(k), factory.make(k)),
    ],
  ]);
  console.log(`| piece (median CPU ms per call, ${rounds} rounds × ${count}) | ms |\n| --- | --- |`);
  for (const [label, ms] of [...jsSide, ...ladder]) console.log(`| ${label} | ${ms.toFixed(3)} |`);

  console.log('\nEXPLAIN (ANALYZE) of the body as the app role:');
  for (const search of ['inline', 'deferred']) {
    const results = await client.exec(
      `begin; ${asApp} select set_config('agent_history.search', '${search}', true);
       explain (analyze, costs off, buffers off) ${slotInsert(randomUUID().length)}; rollback;`,
    );
    const lines = results.flatMap((result) => result.rows.map((row) => Object.values(row)[0]));
    console.log(`-- search ${search}`);
    for (const line of lines) if (typeof line === 'string' && /Trigger|Time|actual/.test(line)) console.log(line);
  }
  await embedded.close();
}

runMain(main);
