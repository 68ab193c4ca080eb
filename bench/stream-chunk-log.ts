// The write cost of resumable answers: on its own PostgreSQL 15 cluster,
// (1) one chunk per write, sequential: the cost of a batch; (2) an answer of 2,000 chunks arriving every 2 ms
// through the batching log (flushMs 50): how many writes it takes and what they cost per chunk.
// Run: npx tsx bench/stream-chunk-log.ts
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { createStreamChunkLog } from '../src/ai-sdk/resume/stream-chunk-log.js';
import { createAgentHistory, type TenantHistory } from '../src/index.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { startBenchServer } from './server.js';

const CHUNK = { type: 'text-delta', id: 'text-1', delta: 'word ' };

async function begin(history: TenantHistory) {
  const thread = await history.createThread({});
  const messageId = `a-${randomUUID()}`;
  await history.beginAssistantMessage(thread.id, { messageId });
  return { threadId: thread.id, messageId };
}

async function oneChunkPerWrite(history: TenantHistory, writes: number) {
  const { threadId, messageId } = await begin(history);
  const started = performance.now();
  for (let batch = 0; batch < writes; batch++)
    await history.appendStreamChunks(threadId, messageId, { batch, chunks: [CHUNK] });
  return (performance.now() - started) / writes;
}

async function batchedAnswer(history: TenantHistory, chunks: number, everyMs: number, flushMs: number) {
  const { threadId, messageId } = await begin(history);
  let writes = 0;
  let writeMs = 0;
  const counted: TenantHistory = {
    ...history,
    appendStreamChunks: async (...args) => {
      const started = performance.now();
      await history.appendStreamChunks(...args);
      writes++;
      writeMs += performance.now() - started;
    },
  };
  const log = createStreamChunkLog({
    history: counted,
    threadId,
    messageId,
    options: { flushMs, retainMs: 60_000 },
    onPersistError: (error) => {
      throw error;
    },
  });
  const started = performance.now();
  for (let index = 0; index < chunks; index++) {
    log.push(CHUNK);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await log.close();
  return { writes, writeMsPerChunk: writeMs / chunks, wallMs: performance.now() - started };
}

const server = await startBenchServer();
try {
  await server.createDatabase('bench_stream_chunks', { migrated: true });
  const client = postgres(server.appUrl('bench_stream_chunks'), { max: 4, onnotice: () => {} });
  const history = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase }).forTenant(
    randomUUID(),
  );
  await oneChunkPerWrite(history, 100); // warm-up
  const perWrite = await oneChunkPerWrite(history, 1000);
  // The floor: one read-only tenant transaction (BEGIN, the tenant setting, one SELECT, COMMIT).
  const { threadId } = await begin(history);
  const readStarted = performance.now();
  for (let index = 0; index < 1000; index++) await history.getThread(threadId);
  const readMs = (performance.now() - readStarted) / 1000;
  const batched = await batchedAnswer(history, 2000, 2, 50);
  console.log(
    JSON.stringify(
      {
        oneChunkPerWriteMs: Number(perWrite.toFixed(3)),
        getThreadMs: Number(readMs.toFixed(3)),
        batched: {
          chunks: 2000,
          writes: batched.writes,
          chunksPerWrite: Number((2000 / batched.writes).toFixed(1)),
          writeMsPerChunk: Number(batched.writeMsPerChunk.toFixed(4)),
          wallMs: Math.round(batched.wallMs),
        },
      },
      null,
      2,
    ),
  );
  await client.end();
} finally {
  server.stop();
}
