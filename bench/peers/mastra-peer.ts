// Mastra memory on PostgreSQL (peerbench's mastra-pg): @mastra/pg PostgresStore, memory domain, calling exactly
// what Mastra's agent loop calls — saveMessages to append, listMessages (newest N, or perPage: false) to load.
// Mastra orders a thread by the client-supplied createdAt (tie-break id); like a fresh MessageList we stamp
// new Date() at append time. Imported lazily so the other peers never load Mastra.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import type { BenchMessage } from '../messages.js';
import type { AppendPeer } from './peer.js';

type MastraMessage = Record<string, unknown>;
interface MastraMemory {
  saveThread(input: { thread: Record<string, unknown> }): Promise<unknown>;
  saveMessages(input: { messages: MastraMessage[] }): Promise<unknown>;
  listMessages(input: Record<string, unknown>): Promise<{ messages: { id: string }[] }>;
}

export function toMastra(threadId: string, resourceId: string, message: BenchMessage, createdAt: Date): MastraMessage {
  const parts = message.parts.map((part) =>
    part.type.startsWith('tool-')
      ? {
          // Mastra's V2 content stores AI SDK v4-style tool-invocation parts.
          type: 'tool-invocation',
          toolInvocation: {
            state: 'result',
            toolCallId: part.toolCallId,
            toolName: part.type.slice(5),
            args: part.input,
            result: part.output,
          },
        }
      : part,
  );
  return {
    id: message.id,
    role: message.role,
    threadId,
    resourceId,
    createdAt,
    type: 'v2',
    content: { format: 2, parts },
  };
}

export type MastraPeer = AppendPeer & {
  seed(threadId: string, messages: BenchMessage[]): Promise<void>;
  loadRecentIds(threadId: string, count: number): Promise<string[]>;
};

export async function mastraPeer({ adminUrl, poolSize }: { adminUrl: string; poolSize: number }): Promise<MastraPeer> {
  const { PostgresStore } = await import('@mastra/pg');
  const store = new PostgresStore({ id: 'bench', connectionString: adminUrl, max: poolSize });
  await store.init();
  const memory = (await store.getStore('memory')) as unknown as MastraMemory | undefined;
  if (!memory) throw new Error('PostgresStore has no memory domain');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const resourceOf = new Map<string, string>();
  return {
    name: 'mastra-pg',
    async createThread() {
      const id = randomUUID();
      const resourceId = `user-${id.slice(0, 8)}`;
      const now = new Date();
      await memory.saveThread({
        thread: { id, resourceId, title: 'bench', createdAt: now, updatedAt: now, metadata: {} },
      });
      resourceOf.set(id, resourceId);
      return id;
    },
    async append(threadId, message) {
      await memory.saveMessages({ messages: [toMastra(threadId, resourceOf.get(threadId)!, message, new Date())] });
    },
    async seed(threadId, messages) {
      // One saveMessages call per 500 messages, createdAt strictly increasing (1 ms apart).
      const base = Date.now() - messages.length - 1000;
      for (let index = 0; index < messages.length; index += 500) {
        const batch = messages
          .slice(index, index + 500)
          .map((message, offset) =>
            toMastra(threadId, resourceOf.get(threadId)!, message, new Date(base + index + offset)),
          );
        await memory.saveMessages({ messages: batch });
      }
    },
    async loadRecentIds(threadId, count) {
      const result = await memory.listMessages({
        threadId,
        resourceId: resourceOf.get(threadId),
        page: 0,
        perPage: count,
        orderBy: { field: 'createdAt', direction: 'DESC' },
        includeTotal: false,
      });
      return result.messages.map((message) => message.id).reverse();
    },
    loadAllIds: async (threadId) =>
      (await memory.listMessages({ threadId, perPage: false })).messages.map((message) => message.id),
    idsByCommit: async (threadId) =>
      (
        await admin<{ id: string }[]>`select id from mastra_messages where thread_id = ${threadId}
        order by pg_xact_commit_timestamp(xmin), id`
      ).map((row) => row.id),
    close: async () => {
      await store.close();
      await admin.end({ timeout: 5 });
    },
  };
}
