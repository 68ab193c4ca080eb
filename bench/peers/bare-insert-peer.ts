// The physical-limit reference (peerbench's raw-insert): a bare single-row INSERT per message with postgres-js —
// no ORM, no transaction block, no read before the write, one round trip, as the superuser. Its order key is
// the server's now(); the (thread_id, created_at) index is the minimum any store needs to read a thread.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { AppendPeer } from './peer.js';

export const BARE_DDL = [
  `create table if not exists raw_message (
     id uuid primary key,
     thread_id uuid not null,
     role text not null,
     parts json not null,
     created_at timestamptz not null default now())`,
  `create index if not exists raw_message_thread_created_idx on raw_message (thread_id, created_at)`,
];

export async function bareInsertPeer({
  adminUrl,
  poolSize,
}: {
  adminUrl: string;
  poolSize: number;
}): Promise<AppendPeer & { sql: postgres.Sql }> {
  const sql = postgres(adminUrl, { max: poolSize, onnotice: () => {} });
  for (const statement of BARE_DDL) await sql.unsafe(statement);
  return {
    name: 'bare-insert',
    sql,
    createThread: async () => randomUUID(),
    append: async (threadId, message) => {
      // ::text first: postgres-js JSON.stringify()s any parameter the server types as json.
      await sql`insert into raw_message (id, thread_id, role, parts)
                values (${message.id}, ${threadId}, ${message.role}, ${JSON.stringify(message.parts)}::text::json)`;
    },
    loadAllIds: async (threadId) =>
      (
        await sql<{ id: string }[]>`select id from raw_message where thread_id = ${threadId} order by created_at, id`
      ).map((row) => row.id),
    idsByCommit: async (threadId) =>
      (
        await sql<{ id: string }[]>`select id from raw_message where thread_id = ${threadId}
        order by pg_xact_commit_timestamp(xmin), id`
      ).map((row) => row.id),
    close: () => sql.end({ timeout: 5 }),
  };
}
