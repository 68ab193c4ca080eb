// The Vercel AI chatbot's own persistence, as its lib/db/schema.ts and lib/db/queries.ts write it: Drizzle over
// postgres-js, a `Chat` row per conversation and one `Message_v2` row per UIMessage (parts as json, createdAt taken in
// the client), no row-level security, connected as the owner. Append = `db.insert(message).values([…])`; load =
// `select … where chatId = ? order by createdAt asc`. Like the chatbot, the table has no index but its primary key;
// `BENCH_CHATBOT_INDEX=1` adds one on (chatId, createdAt) for a fairer read.
import { randomUUID } from 'node:crypto';
import { asc, desc, eq, sql as drizzleSql } from 'drizzle-orm';
import { json, pgTable, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { AppendPeer } from './peer.js';

export const chat = pgTable('Chat', {
  id: uuid('id').primaryKey().notNull().defaultRandom(),
  createdAt: timestamp('createdAt').notNull(),
  title: text('title').notNull(),
  userId: uuid('userId').notNull(),
  visibility: varchar('visibility', { enum: ['public', 'private'] })
    .notNull()
    .default('private'),
});

export const message = pgTable('Message_v2', {
  id: uuid('id').primaryKey().notNull().defaultRandom(),
  chatId: uuid('chatId')
    .notNull()
    .references(() => chat.id),
  role: varchar('role').notNull(),
  parts: json('parts').notNull(),
  attachments: json('attachments').notNull(),
  createdAt: timestamp('createdAt').notNull(),
});

/** drizzle-kit's SQL for the two tables (and the optional index). */
export const CHATBOT_DDL = [
  `create table if not exists "Chat" ("id" uuid primary key default gen_random_uuid() not null, "createdAt" timestamp not null,
     "title" text not null, "userId" uuid not null, "visibility" varchar default 'private' not null)`,
  `create table if not exists "Message_v2" ("id" uuid primary key default gen_random_uuid() not null, "chatId" uuid not null
     references "Chat"("id"), "role" varchar not null, "parts" json not null, "attachments" json not null,
     "createdAt" timestamp not null)`,
  ...(process.env.BENCH_CHATBOT_INDEX === '1'
    ? [`create index if not exists "Message_v2_chat_created_idx" on "Message_v2" ("chatId", "createdAt")`]
    : []),
];

export async function drizzleChatbotPeer({ adminUrl, poolSize }: { adminUrl: string; poolSize: number }) {
  const client = postgres(adminUrl, { max: poolSize, onnotice: () => {} });
  for (const statement of CHATBOT_DDL) await client.unsafe(statement);
  const db = drizzle({ client });
  const userId = randomUUID();
  const ids = async (query: Promise<{ id: string }[]>) => (await query).map((row) => row.id);
  return {
    name: 'drizzle-chatbot',
    db,
    async createThread() {
      const id = randomUUID();
      await db.insert(chat).values({ id, createdAt: new Date(), title: 'bench', userId, visibility: 'private' });
      return id;
    },
    async append(threadId, { id, role, parts }) {
      await db.insert(message).values([{ id, chatId: threadId, role, parts, attachments: [], createdAt: new Date() }]);
    },
    /** The chatbot's getMessagesByChatId. */
    loadAllIds: (threadId) =>
      ids(db.select().from(message).where(eq(message.chatId, threadId)).orderBy(asc(message.createdAt))),
    /** The newest `limit` (the chatbot loads the whole chat; this is the same query with a limit), oldest first. */
    loadRecentIds: async (threadId: string, limit: number) =>
      (
        await ids(
          db.select().from(message).where(eq(message.chatId, threadId)).orderBy(desc(message.createdAt)).limit(limit),
        )
      ).reverse(),
    idsByCommit: (threadId) =>
      ids(
        db
          .select({ id: message.id })
          .from(message)
          .where(eq(message.chatId, threadId))
          .orderBy(drizzleSql`pg_xact_commit_timestamp(xmin)`, message.id),
      ),
    close: () => client.end({ timeout: 5 }),
  } satisfies AppendPeer & Record<string, unknown>;
}
export type DrizzleChatbotPeer = Awaited<ReturnType<typeof drizzleChatbotPeer>>;
