// PGlite (in process), side by side in one process and one PGlite: W1's shape (50 threads × 40 appends, 8 in
// flight) and one appender at a time, for a bare INSERT of the same payload and agent-history per search indexing
// mode, each as it runs now and as it ran before the PGlite append path (every statement through Drizzle's
// extended-protocol query, 2 append statements in flight): that is the same store on a Drizzle database whose
// `$client` is hidden. Everything is this process's CPU (`process.cpuUsage`), so the CPU figures depend little on
// other processes; appends/s do. Rounds interleave the variants; medians. `npx tsx bench/pglite-append-cost.ts`
// (BENCH_PGLITE_ROUNDS, default 3; BENCH_APPEND_COUNT appends one at a time per variant and round, default 500).
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { drizzle } from 'drizzle-orm/pglite';
import { MessageFactory } from './messages.js';
import { embeddedBarePeer, openEmbedded } from './workloads/w5-embedded.js';
import { runW1Append } from './workloads/w1-append.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { SearchIndexing } from '../src/store/store-context-parts.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import type { BenchMessage } from './messages.js';
import { runMain } from './run-main.js';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 500);
const rounds = Number(process.env.BENCH_PGLITE_ROUNDS ?? 3);
const W1 = { threads: 50, messages: 40, concurrency: 8 };

interface Variant {
  label: string;
  createThread(): Promise<string>;
  append(threadId: string, message: BenchMessage): Promise<void>;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function main() {
  const embedded = await openEmbedded();
  const factory = new MessageFactory({ seed: 42 });
  const db = drizzle({ client: embedded.client }) as unknown as AgentHistoryDatabase;
  // The path before: the same store, on a Drizzle database that does not show its PGlite client.
  const drizzleOnly = drizzle({ client: embedded.client }) as unknown as AgentHistoryDatabase & { $client?: unknown };
  delete drizzleOnly.$client;
  const bare = embeddedBarePeer(embedded);
  const variants: Variant[] = [{ label: 'bare INSERT', createThread: bare.createThread, append: bare.append }];
  for (const search of ['inline', false] as SearchIndexing[]) {
    for (const [path, on] of [
      ['before (Drizzle query, 2 in flight)', drizzleOnly],
      ['now', db],
    ] as const) {
      const store = createAgentHistory({ db: on, search }).forTenant(randomUUID());
      variants.push({
        label: `search: ${String(search)}, ${path}`,
        createThread: async () => (await store.createThread()).id,
        append: async (threadId, message) => {
          await store.appendMessage(threadId, message);
        },
      });
    }
  }
  const w1 = new Map(variants.map((variant) => [variant.label, { perSecond: [] as number[], cpu: [] as number[] }]));
  const alone = new Map(variants.map((variant) => [variant.label, [] as number[]]));
  const loads: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      loads.push(loadavg()[0]!);
      const before = process.cpuUsage();
      const result = await runW1Append({ ...variant, loadAllIds: async () => [] }, factory, W1);
      const used = process.cpuUsage(before);
      w1.get(variant.label)!.perSecond.push(result.appendsPerSecond);
      w1.get(variant.label)!.cpu.push((used.user + used.system) / 1000 / (W1.threads * W1.messages));
      const threads = await Promise.all(Array.from({ length: 50 }, () => variant.createThread()));
      for (let k = 0; k < 50; k++) await variant.append(threads[k % 50]!, factory.make(k));
      const start = process.cpuUsage();
      for (let k = 0; k < count; k++) await variant.append(threads[k % 50]!, factory.make(1_000 + k));
      const spent = process.cpuUsage(start);
      alone.get(variant.label)!.push((spent.user + spent.system) / 1000 / count);
    }
  }
  const bareW1 = median(w1.get('bare INSERT')!.perSecond);
  console.log(
    `PGlite, ${rounds} rounds (medians), 1-minute load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}\n`,
  );
  console.log(
    '| PGlite | W1 appends/s (50 × 40, 8 in flight) | ÷ bare | W1 CPU ms per append | one at a time: CPU ms per append |',
  );
  console.log('| --- | --- | --- | --- | --- |');
  for (const { label } of variants) {
    const { perSecond, cpu } = w1.get(label)!;
    console.log(
      `| ${label} | ${Math.round(median(perSecond)).toLocaleString('en-US')} | ${(median(perSecond) / bareW1).toFixed(2)} | ${median(cpu).toFixed(3)} | ${median(alone.get(label)!).toFixed(3)} |`,
    );
  }
  await embedded.close();
}

runMain(main);
