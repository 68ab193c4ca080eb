// Where the client's CPU goes in an append: a V8 CPU profile of 3,000 appends (one appender, 50 threads, no write
// combining, `search: 'inline'`) after a warm-up, summarized by self time per function and per module.
// `npx tsx bench/append-profile.ts` (BENCH_APPEND_COUNT appends, default 3,000; BENCH_PROFILE_OUT writes the .cpuprofile;
// BENCH_PROFILE_SHAPE=w1 profiles W1's shape instead: 8 appenders, a pool of 8, write combining at its defaults).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { MessageFactory } from './messages.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 3_000);
/** `w1`: W1's shape instead (8 appenders, a pool of 8, write combining at its defaults). */
const w1 = process.env.BENCH_PROFILE_SHAPE === 'w1';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: 'off' });
  try {
    await server.createDatabase('bench_append_profile', { migrated: true });
    const client = postgres(server.appUrl('bench_append_profile'), { max: w1 ? 8 : 1, onnotice: () => {} });
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    const store = createAgentHistory({ db, ...(w1 ? {} : { appendBatching: false }) }).forTenant(randomUUID());
    const appendAll = async (from: number, to: number) => {
      let next = from;
      const appender = async () => {
        while (next < to) {
          const k = next++;
          await store.appendMessage(threads[k % 50]!, factory.make(k));
        }
      };
      await Promise.all(Array.from({ length: w1 ? 8 : 1 }, appender));
    };
    const threads: string[] = [];
    for (let index = 0; index < 50; index++) threads.push((await store.createThread()).id);
    const factory = new MessageFactory({ seed: 42 });
    await appendAll(0, 500);
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    const started = process.cpuUsage();
    await appendAll(1_000, 1_000 + count);
    const used = process.cpuUsage(started);
    const { profile } = (await session.post('Profiler.stop')) as {
      profile: { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[] };
    };
    if (process.env.BENCH_PROFILE_OUT) writeFileSync(process.env.BENCH_PROFILE_OUT, JSON.stringify(profile));
    const total = profile.samples.length;
    // Each sample stands for the time since the previous one: ms per append per sample, and the busy share.
    const perSample = (profile.endTime - profile.startTime) / 1000 / total / count;
    const byFunction = new Map<string, number>();
    const byModule = new Map<string, number>();
    for (const node of profile.nodes) {
      const hits = node.hitCount ?? 0;
      if (hits === 0) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      const module = url.includes('node_modules/')
        ? url
            .slice(url.lastIndexOf('node_modules/') + 13)
            .split('/')
            .slice(0, url.includes('/@') ? 2 : 1)
            .join('/')
        : url.includes('/src/')
          ? `src/${url.slice(url.lastIndexOf('/src/') + 5)}`
          : url.includes('/bench/')
            ? 'bench'
            : url === ''
              ? `(${functionName || 'native'})`
              : url.replace(/^.*\//, '');
      byModule.set(module, (byModule.get(module) ?? 0) + hits);
      const key = `${functionName || '(anonymous)'} ${module}:${lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
    }
    const show = (map: Map<string, number>, limit: number) =>
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, limit)
        .map(
          ([name, hits]) => `| ${name} | ${((hits / total) * 100).toFixed(1)} % | ${(hits * perSample).toFixed(4)} |`,
        )
        .join('\n');
    const idle = profile.nodes
      .filter((node) => node.callFrame.functionName === '(idle)')
      .reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
    console.log(
      `process CPU per append ${((used.user + used.system) / 1000 / count).toFixed(3)} ms (all threads, profiler included); ` +
        `main thread busy ${((total - idle) * perSample).toFixed(4)} ms per append (${count} appends)`,
    );
    console.log('\n| module | self | ms per append |\n| --- | --- | --- |');
    console.log(show(byModule, 25));
    console.log('\n| function | self | ms per append |\n| --- | --- | --- |');
    console.log(show(byFunction, 40));
    await client.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

runMain(main);
