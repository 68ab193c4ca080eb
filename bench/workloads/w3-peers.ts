// W3 for the peers: the newest 50 messages and the whole thread, on threads seeded outside the timing.
// The bare table is seeded with the same generate_series INSERT; Mastra with its own saveMessages (500 per call).
import type { MessageFactory } from '../messages.js';
import type { MastraPeer } from '../peers/mastra-peer.js';
import type postgres from 'postgres';
import { sampleInterleaved, SHORT_READ_WARMUP_CALLS } from './time-operation.js';
import type { DrizzleChatbotPeer } from '../peers/drizzle-chatbot-peer.js';

async function loadBenchTemplates(sql: postgres.Sql, factory: MessageFactory) {
  await sql.unsafe(
    `create table if not exists bench_template (idx int primary key, role text not null, parts json not null)`,
  );
  await sql.unsafe(
    `insert into bench_template select (e->>'idx')::int, e->>'role', e->'parts' from json_array_elements($1::text::json) e
    on conflict do nothing`,
    [JSON.stringify(factory.templates.map((template, idx) => ({ idx, ...template })))],
  );
}

export async function seedBareThreads(sql: postgres.Sql, factory: MessageFactory, sizes: number[]) {
  await loadBenchTemplates(sql, factory);
  const threads = [];
  for (const size of sizes) {
    const threadId = crypto.randomUUID();
    await sql.unsafe(
      `insert into raw_message (id, thread_id, role, parts, created_at)
      select gen_random_uuid(), $1::uuid, t.role, t.parts, now() - make_interval(secs => $2::int - q)
      from generate_series(1, $2::int) q join bench_template t on t.idx = ($2::int - q) % 256`,
      [threadId, size],
    );
    threads.push({ size, threadId });
  }
  await sql.unsafe('vacuum analyze');
  return threads;
}

export async function measureBareThreads(
  sql: postgres.Sql,
  threads: { size: number; threadId: string }[],
  { rounds, wholeRounds, wholeMax = Infinity }: { rounds: number; wholeRounds: number; wholeMax?: number },
) {
  const recent = await sampleInterleaved(
    threads.map(({ size, threadId }) => ({
      key: `${size}:newest50`,
      operation: () =>
        sql`select id, role, parts from raw_message where thread_id = ${threadId} order by created_at desc, id desc limit 50`,
      check: (rows: unknown[]) => rows.length === Math.min(50, size),
    })),
    rounds,
    { warmupCalls: SHORT_READ_WARMUP_CALLS },
  );
  const whole = await sampleInterleaved(
    threads
      .filter(({ size }) => size <= wholeMax)
      .map(({ size, threadId }) => ({
        key: `${size}:whole`,
        operation: () =>
          sql`select id, role, parts from raw_message where thread_id = ${threadId} order by created_at, id`,
        check: (rows: unknown[]) => rows.length === size,
      })),
    wholeRounds,
  );
  return threads.map(({ size }) => ({
    size,
    newest50: recent.get(`${size}:newest50`),
    whole: whole.get(`${size}:whole`),
  }));
}

export async function seedMastraThreads(
  peer: MastraPeer,
  admin: postgres.Sql,
  factory: MessageFactory,
  sizes: number[],
) {
  const threads = [];
  for (const size of sizes) {
    const threadId = await peer.createThread();
    const messages = Array.from({ length: size }, (_, index) => factory.make(size - 1 - index));
    await peer.seed(threadId, messages);
    threads.push({ size, threadId, ids: messages.map((message) => message.id) });
  }
  // Without statistics Mastra's newest-N query plans a whole-thread bitmap scan and sort (peerbench's finding).
  await admin.unsafe('vacuum analyze');
  return threads;
}

export async function measureMastraThreads(
  peer: MastraPeer,
  threads: { size: number; threadId: string; ids: string[] }[],
  { rounds, wholeRounds, wholeMax = Infinity }: { rounds: number; wholeRounds: number; wholeMax?: number },
) {
  const recent = await sampleInterleaved(
    threads.map(({ size, threadId, ids }) => ({
      key: `${size}:newest50`,
      operation: () => peer.loadRecentIds(threadId, 50),
      check: (result: string[]) =>
        result.length === Math.min(50, size) && result.every((id, index) => id === ids.slice(-50)[index]),
    })),
    rounds,
    { warmupCalls: SHORT_READ_WARMUP_CALLS },
  );
  const whole = await sampleInterleaved(
    threads
      .filter(({ size }) => size <= wholeMax)
      .map(({ size, threadId, ids }) => ({
        key: `${size}:whole`,
        operation: () => peer.loadAllIds(threadId),
        check: (result: string[]) => result.length === size && result.every((id, index) => id === ids[index]),
      })),
    wholeRounds,
  );
  return threads.map(({ size }) => ({
    size,
    newest50: recent.get(`${size}:newest50`),
    whole: whole.get(`${size}:whole`),
  }));
}

/** The chatbot's tables, seeded with the same generate_series INSERT as the bare table (createdAt in the client's clock). */
export async function seedChatbotThreads(
  peer: DrizzleChatbotPeer,
  sql: postgres.Sql,
  factory: MessageFactory,
  sizes: number[],
) {
  await loadBenchTemplates(sql, factory);
  const threads = [];
  for (const size of sizes) {
    const threadId = await peer.createThread();
    await sql.unsafe(
      `insert into "Message_v2" (id, "chatId", role, parts, attachments, "createdAt")
      select gen_random_uuid(), $1::uuid, t.role, t.parts, '[]', localtimestamp - make_interval(secs => $2::int - q)
      from generate_series(1, $2::int) q join bench_template t on t.idx = ($2::int - q) % 256`,
      [threadId, size],
    );
    threads.push({ size, threadId });
  }
  await sql.unsafe('vacuum analyze');
  return threads;
}

export async function measureChatbotThreads(
  peer: DrizzleChatbotPeer,
  threads: { size: number; threadId: string }[],
  { rounds, wholeRounds, wholeMax = Infinity }: { rounds: number; wholeRounds: number; wholeMax?: number },
) {
  const recent = await sampleInterleaved(
    threads.map(({ size, threadId }) => ({
      key: `${size}:newest50`,
      operation: () => peer.loadRecentIds(threadId, 50),
      check: (rows: unknown[]) => rows.length === Math.min(50, size),
    })),
    rounds,
    { warmupCalls: SHORT_READ_WARMUP_CALLS },
  );
  const whole = await sampleInterleaved(
    threads
      .filter(({ size }) => size <= wholeMax)
      .map(({ size, threadId }) => ({
        key: `${size}:whole`,
        operation: () => peer.loadAllIds(threadId),
        check: (rows: unknown[]) => rows.length === size,
      })),
    wholeRounds,
  );
  return threads.map(({ size }) => ({
    size,
    newest50: recent.get(`${size}:newest50`),
    whole: whole.get(`${size}:whole`),
  }));
}
