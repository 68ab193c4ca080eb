// PGlite (in process): CPU per append per search indexing mode against a bare INSERT of the same payload, one
// appender over 50 threads after a warm-up. Everything is this process's CPU (`process.cpuUsage`), so the figures do
// not depend on other processes much. `npx tsx bench/pglite-append-cost.ts` (BENCH_APPEND_COUNT, default 1,000).
import { randomUUID } from 'node:crypto';
import { MessageFactory } from './messages.js';
import { BARE_DDL } from './peers/bare-insert-peer.js';
import { openEmbedded } from './workloads/w5-embedded.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { SearchIndexing } from '../src/store/search-indexing.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { drizzle } from 'drizzle-orm/pglite';

const count = Number(process.env.BENCH_APPEND_COUNT ?? 1_000);
const THREADS = 50;

async function main() {
  const embedded = await openEmbedded();
  const factory = new MessageFactory({ seed: 42 });
  const db = drizzle({ client: embedded.client }) as unknown as AgentHistoryDatabase;
  for (const statement of BARE_DDL) await embedded.client.exec(statement);
  const variants: Array<[string, (k: number) => Promise<unknown>]> = [];
  const bareThreads = Array.from({ length: THREADS }, () => randomUUID());
  variants.push([
    'bare INSERT',
    (k) => {
      const message = factory.make(k);
      return embedded.client.query(`insert into raw_message (id, thread_id, role, parts) values ($1, $2, $3, $4)`, [
        message.id,
        bareThreads[k % THREADS],
        message.role,
        JSON.stringify(message.parts),
      ]);
    },
  ]);
  for (const search of ['inline', 'deferred', false] as SearchIndexing[]) {
    const store = createAgentHistory({ db, search }).forTenant(randomUUID());
    const threads: string[] = [];
    for (let index = 0; index < THREADS; index++) threads.push((await store.createThread()).id);
    variants.push([`search: ${String(search)}`, (k) => store.appendMessage(threads[k % THREADS]!, factory.make(k))]);
  }
  for (const [, operation] of variants) for (let k = 0; k < 200; k++) await operation(k);
  console.log('| PGlite, per append | CPU ms (client = everything) |\n| --- | --- |');
  for (const [label, operation] of variants) {
    const before = process.cpuUsage();
    for (let k = 0; k < count; k++) await operation(1_000 + k);
    const used = process.cpuUsage(before);
    console.log(`| ${label} | ${((used.user + used.system) / 1000 / count).toFixed(3)} |`);
  }
  await embedded.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
