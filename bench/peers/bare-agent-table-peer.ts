// A second reference that splits "what the schema costs" from "what the append path costs": a bare single-row
// INSERT into agent-history's own agent_message table (same indexes, search vector trigger, GIN), as the
// superuser (no RLS), no function, no thread-row update, no token counting; the sequence comes from an
// in-process counter per thread (correct only because one process writes).
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { AppendPeer } from './peer.js';

export async function bareAgentTablePeer({
  adminUrl,
  poolSize,
}: {
  adminUrl: string;
  poolSize: number;
}): Promise<AppendPeer> {
  const sql = postgres(adminUrl, { max: poolSize, onnotice: () => {} });
  const tenantId = randomUUID();
  const nextSequence = new Map<string, number>();
  return {
    name: 'bare-agent-table',
    async createThread() {
      const id = randomUUID();
      await sql`insert into agent_thread (tenant_id, id) values (${tenantId}, ${id})`;
      nextSequence.set(id, 0);
      return id;
    },
    async append(threadId, message) {
      const sequence = nextSequence.get(threadId)! + 1;
      nextSequence.set(threadId, sequence);
      const partsJson = JSON.stringify(message.parts);
      await sql`insert into agent_message (tenant_id, thread_id, sequence, message_id, role, parts, byte_size, completed_at)
        values (${tenantId}, ${threadId}, ${sequence}, ${message.id}, ${message.role}, ${partsJson}::text::json, ${partsJson.length + 2}, now())`;
    },
    loadAllIds: async (threadId) =>
      (
        await sql<
          { message_id: string }[]
        >`select message_id from agent_message where thread_id = ${threadId} order by sequence`
      ).map((row) => row.message_id),
    idsByCommit: async (threadId) =>
      (
        await sql<{ message_id: string }[]>`select message_id from agent_message where thread_id = ${threadId}
        order by pg_xact_commit_timestamp(xmin), sequence`
      ).map((row) => row.message_id),
    close: () => sql.end({ timeout: 5 }),
  };
}
