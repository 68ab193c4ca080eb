// W7 from a real store: `initialMessages()` by a new context manager (one per request) on a 600-message thread
// (W7's turns, ~250k tokens) appended to PGlite, read through the store's context store (`loadContext`) on every
// call. Two threads: one as this release writes it (per-part counts stored), one with `part_token_counts` set to
// NULL, as a row counted while streaming has them (the engine then tokenizes what it prunes). Snapshots are accepted and
// not kept, so every call walks the same thread. CPU of this process, which runs PGlite too (the read is included).
//
//   npx tsx bench/workloads/w7-stored-first-call.ts
//   BENCH_W7_CALLS=100 npx tsx bench/workloads/w7-stored-first-call.ts
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { randomUUID } from 'node:crypto';
import { createContextManager } from '../../src/ai-sdk/context-manager/create-context-manager.js';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import type { ContextSnapshot, ContextStore } from '../../src/model/context-store.js';
import { createAgentHistory, migrate } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { runMain } from '../run-main.js';
import { summarize } from '../stats.js';
import { turn } from './w7-first-call.js';

const SIZE = 600;

async function main() {
  const calls = Number(process.env.BENCH_W7_CALLS ?? 60);
  const client = await PGlite.create();
  const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
  await migrate(db);
  const tokenCounter = await loadO200kTokenCounter();
  const store = createAgentHistory({ db, tokenCounter }).forTenant(randomUUID());
  const threads: Record<'stored part counts' | 'no part counts (old rows)', string> = {
    'stored part counts': (await store.createThread()).id,
    'no part counts (old rows)': (await store.createThread()).id,
  };
  for (const thread of Object.values(threads)) {
    let appended = 0;
    for (let index = 0; appended < SIZE - 1; index++)
      for (const message of turn(index))
        if (appended++ < SIZE - 1) await store.appendMessage(thread, message as never, { pinned: appended === 1 });
    await store.appendMessage(thread, {
      id: 'last',
      role: 'user',
      parts: [{ type: 'text', text: 'And next quarter?' }],
    });
  }
  await client.query(`update agent_message set part_token_counts = null where thread_id = $1`, [
    threads['no part counts (old rows)'],
  ]);
  for (const [label, thread] of Object.entries(threads)) {
    const real = store.contextStore(thread);
    const contextStore: ContextStore = {
      loadContext: () => real.loadContext(),
      writeSummary: real.writeSummary,
      writeSnapshot: async (input) =>
        ({ ...input, id: 'snapshot', version: input.expectedVersion + 1, stepNumber: null }) as ContextSnapshot,
    };
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let call = 0; call < calls + 5; call++) {
      const cpuStarted = process.cpuUsage();
      const started = performance.now();
      const manager = createContextManager({
        store: contextStore,
        model: 'openai:gpt-4o',
        maxOutputTokens: 8192,
        tokenCounter,
      });
      await manager.initialMessages({ instructions: 'You are an analyst.' });
      const used = process.cpuUsage(cpuStarted);
      if (call >= 5) {
        wall.push(performance.now() - started);
        cpu.push((used.user + used.system) / 1000);
      }
    }
    const [c, w] = [summarize(cpu), summarize(wall)];
    console.log(
      `${SIZE} messages from PGlite, ${label}, ${calls} calls: CPU median ${c.p50} ms, p99 ${c.p99} ms; wall median ${w.p50} ms, p99 ${w.p99} ms`,
    );
  }
  // The read alone, for scale: what every call above spends in loadContext (PGlite included).
  const cpu: number[] = [];
  for (let call = 0; call < calls + 5; call++) {
    const cpuStarted = process.cpuUsage();
    await store.contextStore(threads['stored part counts']).loadContext();
    const used = process.cpuUsage(cpuStarted);
    if (call >= 5) cpu.push((used.user + used.system) / 1000);
  }
  const read = summarize(cpu);
  console.log(
    `${SIZE} messages from PGlite, loadContext alone, ${calls} calls: CPU median ${read.p50} ms, p99 ${read.p99} ms`,
  );
  await client.close();
}

runMain(main);
