// W8's peers, each making the calls its own chat route makes around the same streamed answer (w8-peer.ts):
// - drizzle-chatbot: the Vercel chatbot template's route (app/(chat)/api/chat/route.ts, lib/db/queries.ts): getChatById
//   (the owner check), getMessagesByChatId (the whole chat, oldest first), convertToModelMessages of all of it,
//   saveMessages([user]) before the model, saveMessages([answer]) in onFinish. Its per-user rate-limit count is left
//   out: an entitlement check, not the chat's persistence.
// - stream-only: no store at all, the answer to the user's message alone: what every peer's turn costs the client
//   before it stores or reads anything.
// - window-floor: the least any store can do to send the model the newest `WINDOW_FLOOR_MESSAGES` messages (no more
//   model messages than agent-history's context sends on chats of 200 or 2,000: see the report's last column): one
//   SELECT of their parts from a bare table (`json`, no tenant, no row-level security, no checks), the AI SDK's
//   conversion, the same stream, and the two messages in one INSERT. What a store that sends the model as much costs
//   at least. Not in the default peers: `BENCH_W8_PEERS=agent-history,mastra-pg,window-floor`.
// - mastra-pg: what @mastra/core's Agent with memory and its MessageHistory processor call on the @mastra/pg store:
//   getThreadById at the start, listMessages (the newest `lastMessages`, 10 by default) to recall, then after the
//   answer getThreadById twice (the agent's, the processor's) and saveMessages([user, answer]) (which reads the thread
//   again and writes both rows and the thread's updatedAt in one transaction).
import { randomUUID } from 'node:crypto';
import { convertToModelMessages, type UIMessage } from 'ai';
import { asc, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { MessageFactory } from '../messages.js';
import { CHATBOT_DDL, chat, message } from '../peers/drizzle-chatbot-peer.js';
import { toMastra } from '../peers/mastra-peer.js';
import { W8_TOOLS, w8UserMessage } from './w8-chat-model.js';
import { streamAnswer, type W8Peer } from './w8-peer.js';
import { postgresJsDebug, type StatementCounter } from './w8-statements.js';

const SEED_BATCH = 500;
/** Message k of a chat of `size` (1 = oldest) uses template size - k + 1, as agent-history's seed does. */
const seeded = (factory: MessageFactory, size: number, k: number) => factory.make(size - k + 1);

interface PeerOptions {
  adminUrl: string;
  poolSize: number;
  counter: StatementCounter;
  factory: MessageFactory;
}

export async function chatbotW8({ adminUrl, poolSize, counter, factory }: PeerOptions): Promise<W8Peer> {
  const client = postgres(adminUrl, { max: poolSize, onnotice: () => {}, debug: postgresJsDebug(counter) });
  for (const statement of CHATBOT_DDL) await client.unsafe(statement);
  const db = drizzle({ client });
  const userId = randomUUID();
  return {
    name: 'drizzle-chatbot',
    async seed(size) {
      const id = randomUUID();
      await db.insert(chat).values({ id, createdAt: new Date(), title: 'w8', userId, visibility: 'private' });
      const start = Date.now() - size * 1000;
      for (let from = 1; from <= size; from += SEED_BATCH) {
        const rows = [];
        for (let k = from; k < Math.min(from + SEED_BATCH, size + 1); k++) {
          const { id: messageId, role, parts } = seeded(factory, size, k);
          rows.push({ id: messageId, chatId: id, role, parts, attachments: [], createdAt: new Date(start + k * 1000) });
        }
        await db.insert(message).values(rows);
      }
      return id;
    },
    async turn(chatId) {
      const [found] = await db.select().from(chat).where(eq(chat.id, chatId));
      if (found?.userId !== userId) throw new Error('forbidden');
      const rows = await db.select().from(message).where(eq(message.chatId, chatId)).orderBy(asc(message.createdAt));
      const user = w8UserMessage(randomUUID());
      const uiMessages = [
        ...rows.map((row) => ({
          id: row.id,
          role: row.role as UIMessage['role'],
          parts: row.parts as UIMessage['parts'],
          metadata: { createdAt: row.createdAt.toISOString() },
        })),
        user,
      ];
      await db.insert(message).values([{ ...user, chatId, attachments: [], createdAt: new Date() }]);
      const modelMessages = await convertToModelMessages(uiMessages, { tools: W8_TOOLS });
      await streamAnswer(modelMessages, (answer) =>
        db
          .insert(message)
          .values([
            { id: answer.id, role: answer.role, parts: answer.parts, createdAt: new Date(), attachments: [], chatId },
          ]),
      );
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/** The stored messages the window floor reads and sends the model. */
export const WINDOW_FLOOR_MESSAGES = 180;

export async function windowFloorW8({ adminUrl, poolSize, counter, factory }: PeerOptions): Promise<W8Peer> {
  const sql = postgres(adminUrl, { max: poolSize, onnotice: () => {}, debug: postgresJsDebug(counter) });
  await sql.unsafe(`create table floor_message (
    chat_id uuid not null, id text not null, role text not null, parts json not null, created_at timestamptz not null,
    primary key (chat_id, id))`);
  await sql.unsafe('create index on floor_message (chat_id, created_at)');
  return {
    name: 'window-floor',
    async seed(size) {
      const chatId = randomUUID();
      const start = Date.now() - size * 1000;
      for (let from = 1; from <= size; from += SEED_BATCH) {
        const rows = [];
        for (let k = from; k < Math.min(from + SEED_BATCH, size + 1); k++) {
          const { id, role, parts } = seeded(factory, size, k);
          rows.push({
            chat_id: chatId,
            id,
            role,
            parts: sql.json(parts as never),
            created_at: new Date(start + k * 1000),
          });
        }
        await sql`insert into floor_message ${sql(rows)}`;
      }
      return chatId;
    },
    async turn(chatId) {
      const rows = await sql<{ id: string; role: UIMessage['role']; parts: UIMessage['parts'] }[]>`
        select id, role, parts from floor_message where chat_id = ${chatId}
        order by created_at desc limit ${WINDOW_FLOOR_MESSAGES}`;
      const user = w8UserMessage(randomUUID());
      const uiMessages = [...rows.reverse().map(({ id, role, parts }) => ({ id, role, parts })), user];
      const modelMessages = await convertToModelMessages(uiMessages, { tools: W8_TOOLS });
      const userAt = new Date();
      await streamAnswer(modelMessages, async (answer) => {
        const row = (message: { id: string; role: string; parts: unknown }, at: Date) => ({
          chat_id: chatId,
          id: message.id,
          role: message.role,
          parts: sql.json(message.parts as never),
          created_at: at,
        });
        await sql`insert into floor_message ${sql([row(user, userAt), row(answer, new Date())])}`;
      });
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

interface MastraMemoryStore {
  getThreadById(input: { threadId: string }): Promise<{ id: string; resourceId: string } | null>;
  saveThread(input: { thread: Record<string, unknown> }): Promise<unknown>;
  saveMessages(input: { messages: Record<string, unknown>[] }): Promise<unknown>;
  listMessages(input: Record<string, unknown>): Promise<{ messages: { role: string; content: unknown }[] }>;
}

export async function mastraW8({ adminUrl, poolSize, factory }: PeerOptions): Promise<W8Peer> {
  const { PostgresStore } = await import('@mastra/pg');
  const storage = new PostgresStore({ id: 'w8', connectionString: adminUrl, max: poolSize });
  await storage.init();
  const memory = (await storage.getStore('memory')) as unknown as MastraMemoryStore;
  const resourceId = `user-${randomUUID().slice(0, 8)}`;
  return {
    name: 'mastra-pg',
    async seed(size) {
      const threadId = randomUUID();
      const now = new Date();
      await memory.saveThread({ thread: { id: threadId, resourceId, title: 'w8', createdAt: now, updatedAt: now } });
      const start = Date.now() - size * 1000;
      for (let from = 1; from <= size; from += SEED_BATCH) {
        const batch = [];
        for (let k = from; k < Math.min(from + SEED_BATCH, size + 1); k++)
          batch.push(toMastra(threadId, resourceId, seeded(factory, size, k), new Date(start + k * 1000)));
        await memory.saveMessages({ messages: batch });
      }
      return threadId;
    },
    async turn(threadId) {
      const thread = await memory.getThreadById({ threadId });
      if (thread?.resourceId !== resourceId) throw new Error('forbidden');
      const recalled = await memory.listMessages({
        threadId,
        resourceId,
        page: 0,
        perPage: 10,
        orderBy: { field: 'createdAt', direction: 'DESC' },
        includeTotal: false,
      });
      const user = w8UserMessage(randomUUID());
      const history = recalled.messages.reverse().map((recalledMessage) => ({
        role: recalledMessage.role as 'user' | 'assistant',
        content: JSON.stringify(recalledMessage.content),
      }));
      const modelMessages = [...history, ...(await convertToModelMessages([user]))];
      const userAt = new Date();
      await streamAnswer(modelMessages, async (answer) => {
        await memory.getThreadById({ threadId });
        await memory.getThreadById({ threadId });
        const parts = answer.parts as never;
        await memory.saveMessages({
          messages: [
            toMastra(threadId, resourceId, user, userAt),
            toMastra(threadId, resourceId, { id: answer.id, role: 'assistant', parts }, new Date()),
          ],
        });
      });
    },
    close: () => storage.close(),
  };
}

/** The reference without a store: the same answer streamed to the user's message alone, nothing read or written. */
export function streamOnlyW8(): W8Peer {
  let chats = 0;
  return {
    name: 'stream-only',
    seed: async () => `chat-${++chats}`,
    turn: async () => streamAnswer(await convertToModelMessages([w8UserMessage(randomUUID())]), async () => {}),
    close: async () => {},
  };
}
