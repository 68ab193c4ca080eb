// The floor of an append that keeps agent-history's guarantees, each in its plainest form: a bare two-table schema
// (threads and messages, `parts` as `json`, no search vector, no other column) under forced row-level security, read
// and written as the application login; one statement per append (a plpgsql function: the tenant set for the
// transaction, the message id looked up for idempotency, the thread's counter row bumped for a gapless sequence
// equal to commit order, the row inserted under its foreign key and unique keys); the exact token count of every
// part made on the client with the library's own counter, as the store stores it. No write combining, no checks of
// the input, no run, no search. What an append with these guarantees costs at least, in this shape. The
// `guarded-insert-search` peer is the same floor with every message also indexed for search in its append: what an
// append costs at least in a log that is searchable (the store's default indexes in the append; a store that defers
// the index still pays it, later). `guarded-batch-search` is that floor with write combining (`combiningAppender` and
// the batch function), for W1's and W2's shapes. Every floor stores parts with lz4 where the server has it.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { countStoredPartTokens } from '../../src/tokens/count-stored-message-tokens.js';
import { loadO200kTokenCounter, type TokenCounter } from '../../src/tokens/token-counter.js';
import type { BenchMessage } from '../messages.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';
import { APP_LOGIN } from '../server.js';
import type { AppendPeer } from './peer.js';

const tenantCheck = `tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid`;

/**
 * The search vector as the store's trigger makes it (the text parts' text, the `simple` configuration), for the
 * floor that also indexes every message for search.
 */
export const searchVector = (parts: string) =>
  `to_tsvector('simple'::regconfig, jsonb_path_query_array(${parts}::jsonb, 'strict $[*] ? (@.type == "text").text'))`;

/** The floors' peer names, as `BENCH_PEERS` takes them. */
export const FLOOR_PEERS = ['guarded-insert', 'guarded-insert-search', 'guarded-batch-search'];

/** The floor's tables and function: `guarded_*`, or `searched_*` for the floor that also indexes for search. */
export const floorPrefix = (search: boolean) => (search ? 'searched' : 'guarded');

/**
 * The floor's schema and function, for `role` (the application login on PostgreSQL). With `switchRole` the function
 * switches to `role` for its transaction itself, as the store's functions do on PGlite, whose one login is a superuser.
 * With `search` every message is also indexed for search in its append (a search vector and its GIN index), as a
 * store that leaves nothing unindexed must do at some point: the floor of a searchable log.
 */
export const guardedDdl = (role: string, { switchRole = false, search = false } = {}) => {
  const prefix = floorPrefix(search);
  const [thread, message] = [`${prefix}_thread`, `${prefix}_message`];
  // Each function's first statements: the tenant for the transaction, and the role where it switches itself.
  const asTenant = `perform set_config('app.tenant_id', p_tenant::text, true);${
    switchRole ? ` perform set_config('role', '${role}', true);` : ''
  }`;
  return [
    `create table ${thread} (tenant_id uuid not null, id uuid not null, next_sequence bigint not null default 0,
       primary key (tenant_id, id))`,
    `create table ${message} (tenant_id uuid not null, thread_id uuid not null, sequence bigint not null,
       message_id text not null, role text not null, parts json not null, token_count integer not null,${
         search ? ' search_vector tsvector not null,' : ''
       }
       created_at timestamptz not null default now(),
       primary key (tenant_id, thread_id, sequence), unique (tenant_id, thread_id, message_id),
       foreign key (tenant_id, thread_id) references ${thread} (tenant_id, id))`,
    ...(search ? [`create index ${message}_search_idx on ${message} using gin (search_vector)`] : []),
    // Parts compressed with lz4 where the server has it, as the store's are.
    `do $$ begin
       if exists (select 1 from pg_catalog.pg_settings where name = 'default_toast_compression' and 'lz4' = any (enumvals))
       then alter table ${message} alter column parts set compression lz4; end if;
     end $$`,
    ...[thread, message].flatMap((table) => [
      `alter table ${table} enable row level security`,
      `alter table ${table} force row level security`,
      `create policy ${table}_tenant on ${table} to ${role} using (${tenantCheck}) with check (${tenantCheck})`,
      `grant select, insert, update on ${table} to ${role}`,
    ]),
    `create function ${prefix}_append(p_tenant uuid, p_thread uuid, p_message_id text, p_role text, p_parts json,
       p_tokens integer) returns bigint language plpgsql as $$
     declare found_sequence bigint;
     begin
       ${asTenant}
       select m.sequence into found_sequence from ${message} m
         where m.tenant_id = p_tenant and m.thread_id = p_thread and m.message_id = p_message_id;
       if found then return found_sequence; end if;
       update ${thread} t set next_sequence = t.next_sequence + 1
         where t.tenant_id = p_tenant and t.id = p_thread returning t.next_sequence into found_sequence;
       if not found then raise exception 'thread % not found', p_thread; end if;
       insert into ${message} (tenant_id, thread_id, sequence, message_id, role, parts, token_count${
         search ? ', search_vector' : ''
       })
         values (p_tenant, p_thread, found_sequence, p_message_id, p_role, p_parts, p_tokens${
           search ? `, ${searchVector('p_parts')}` : ''
         });
       return found_sequence;
     end $$`,
    `grant execute on function ${prefix}_append(uuid, uuid, text, text, json, integer) to ${role}`,
    // The same append for a batch of messages, one statement and one commit (the combining floor): items
    // ({ thread, id, role, tokens }) and their parts apart, as the store's batch function takes them; each thread's
    // counter bumped once by its number of new messages. A floor for W1's and W2's shapes: two batches in flight
    // never share a thread in W1, and in W2 share only the one, so the counter rows are taken in no order that could
    // deadlock.
    `create function ${prefix}_append_batch(p_tenant uuid, p_items jsonb, p_parts json) returns setof bigint
       language plpgsql as $$
     begin
       ${asTenant}
       return query
         with items as (
           select (e.value->>'thread')::uuid as thread, e.value->>'id' as message_id, e.value->>'role' as role,
             (e.value->>'tokens')::integer as tokens, e.parts, e.ordinality
           from rows from (jsonb_array_elements(p_items), json_array_elements(p_parts)) with ordinality
             e(value, parts, ordinality)
         ),
         fresh as (
           select i.*, row_number() over (partition by i.thread order by i.ordinality) as rank,
             count(*) over (partition by i.thread) as n
           from items i
           where not exists (select 1 from ${message} m
             where m.tenant_id = p_tenant and m.thread_id = i.thread and m.message_id = i.message_id)
         ),
         slot as (
           update ${thread} t set next_sequence = t.next_sequence + c.n
           from (select distinct f.thread, f.n from fresh f) c
           where t.tenant_id = p_tenant and t.id = c.thread
           returning t.id, t.next_sequence - c.n as before
         )
         insert into ${message} (tenant_id, thread_id, sequence, message_id, role, parts, token_count${
           search ? ', search_vector' : ''
         })
         select p_tenant, f.thread, s.before + f.rank, f.message_id, f.role, f.parts, f.tokens${
           search ? `, ${searchVector('f.parts')}` : ''
         }
         from fresh f join slot s on s.id = f.thread
         order by f.ordinality
         returning sequence;
     end $$`,
    `grant execute on function ${prefix}_append_batch(uuid, jsonb, json) to ${role}`,
  ];
};

/** One message waiting for the combining floor's next statement. */
interface Waiting {
  item: { thread: string; id: string; role: string; tokens: number };
  parts: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The combining floor's client: appends wait while `maxInFlight` statements run, then the next free slot sends every
 * waiting append (up to 64) as one statement of `send(items, parts)` (the items as JSON, the parts as one JSON array
 * in item order), as the store's write combining does; nothing else.
 */
export function combiningAppender(
  send: (items: string, parts: string) => Promise<unknown>,
  maxInFlight: number,
): (item: Waiting['item'], parts: unknown) => Promise<void> {
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  const pump = () => {
    scheduled = false;
    while (inFlight < maxInFlight && waiting.length > 0) {
      const batch = waiting.slice(0, 64);
      waiting = waiting.slice(64);
      inFlight++;
      const items = JSON.stringify(batch.map((entry) => entry.item));
      const parts = `[${batch.map((entry) => entry.parts).join(',')}]`;
      send(items, parts)
        .then(
          () => batch.forEach((entry) => entry.resolve()),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          inFlight--;
          schedule();
        });
    }
  };
  // A statement is sent on the next turn of the event loop, once every append that the last answer released (or
  // that arrived meanwhile) has joined the queue: a free slot does not go to the first of them alone.
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(pump);
  };
  return (item, parts) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ item, parts: JSON.stringify(parts), resolve, reject });
      schedule();
    });
}

/** The message's exact token count as the floor stores it: the library's per-part count, summed. */
export function guardedTokenCount(message: BenchMessage, tokenCounter: TokenCounter): number {
  const parts = countStoredPartTokens({ message: message as unknown as ContextUIMessage, tokenCounter });
  return parts.reduce((sum, count) => sum + count, 0);
}

export async function guardedInsertPeer({
  adminUrl,
  appUrl,
  poolSize,
  search = false,
  combine = false,
  inFlight = 2,
}: {
  adminUrl: string;
  appUrl: string;
  poolSize: number;
  /** The floor of a searchable log: every message also indexed for search in its append. */
  search?: boolean;
  /**
   * The combining floor: concurrent appends sent as one statement, `inFlight` statements at a time (2, as the store's
   * are by default).
   */
  combine?: boolean;
  inFlight?: number;
}): Promise<AppendPeer> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  for (const statement of guardedDdl(APP_LOGIN, { search })) await admin.unsafe(statement);
  const prefix = floorPrefix(search);
  const sql = postgres(appUrl, { max: poolSize, onnotice: () => {} });
  const tokenCounter = await loadO200kTokenCounter();
  const tenantId = randomUUID();
  const combined = combine
    ? combiningAppender(
        (items, parts) =>
          sql`select ${sql.unsafe(`${prefix}_append_batch`)}(${tenantId}, ${items}::text::jsonb, ${parts}::text::json)`,
        inFlight,
      )
    : null;
  const asTenant = <ROWS>(work: (tx: postgres.TransactionSql) => Promise<ROWS>) =>
    sql.begin(async (tx) => {
      await tx`select set_config('app.tenant_id', ${tenantId}, true)`;
      return work(tx);
    }) as Promise<ROWS>;
  return {
    name: `guarded-${combine ? 'batch' : 'insert'}${search ? '-search' : ''}${combine && inFlight !== 2 ? `-${inFlight}` : ''}`,
    async createThread() {
      const id = randomUUID();
      await asTenant((tx) => tx`insert into ${sql(`${prefix}_thread`)} (tenant_id, id) values (${tenantId}, ${id})`);
      return id;
    },
    async append(threadId, message) {
      const tokens = guardedTokenCount(message, tokenCounter);
      if (combined) return combined({ thread: threadId, id: message.id, role: message.role, tokens }, message.parts);
      // ::text first: postgres-js JSON.stringify()s any parameter the server types as json.
      await sql`select ${sql.unsafe(`${prefix}_append`)}(${tenantId}, ${threadId}, ${message.id}, ${message.role},
        ${JSON.stringify(message.parts)}::text::json, ${tokens})`;
    },
    loadAllIds: async (threadId) =>
      (
        await asTenant(
          (tx) =>
            tx<
              { message_id: string }[]
            >`select message_id from ${sql(`${prefix}_message`)} where thread_id = ${threadId}
              order by sequence`,
        )
      ).map((row) => row.message_id),
    idsByCommit: async (threadId) =>
      (
        await admin<
          { message_id: string }[]
        >`select message_id from ${admin(`${prefix}_message`)} where thread_id = ${threadId}
          order by pg_xact_commit_timestamp(xmin), sequence`
      ).map((row) => row.message_id),
    close: async () => {
      await sql.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    },
  };
}
