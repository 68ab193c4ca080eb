// What the content columns' compression costs: two databases migrated alike, one with `agent_message.parts` set back
// to pglz (PostgreSQL's default) and one as migrated (lz4, where the server has it), each with a store as the app
// login. W1's appends (50 threads, 8 in flight, write combining) and newest-50 pages of those threads
// (`listChatMessages`), interleaved round by round; client and server CPU per operation (independent of the load),
// WAL per append, and wall time, with lz4 ÷ pglz. `npx tsx bench/compression-cost.ts` (BENCH_COMPRESSION_ROUNDS,
// default 3; BENCH_COMPRESSION_APPENDS per round, default 2,000).
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { cpuMeter, cpuPerOperation } from './cpu.js';
import { MessageFactory } from './messages.js';
import { startBenchServer } from './server.js';
import { createAgentHistory } from '../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../src/tenant/database.js';
import { runMain } from './run-main.js';

const rounds = Number(process.env.BENCH_COMPRESSION_ROUNDS ?? 3);
const appends = Number(process.env.BENCH_COMPRESSION_APPENDS ?? 2_000);
const PAGES = 500;
const THREADS = 50;
const METHODS = ['pglz', 'lz4'] as const;

async function main() {
  const server = await startBenchServer({ profile: false, synchronousCommit: null });
  const meter = cpuMeter(await server.postmasterPid(), () => server.walBytes());
  const factory = new MessageFactory({ seed: 42 });
  try {
    interface Setup {
      method: (typeof METHODS)[number];
      client: postgres.Sql;
      store: ReturnType<ReturnType<typeof createAgentHistory>['forTenant']>;
      threads: string[];
      next: number;
    }
    const setups: Setup[] = [];
    for (const method of METHODS) {
      const database = `bench_compression_${method}`;
      await server.createDatabase(database, { migrated: true });
      const admin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
      const [{ methods }] = await admin<Array<{ methods: string[] }>>`
        select enumvals as methods from pg_settings where name = 'default_toast_compression'`;
      if (!methods.includes('lz4')) throw new Error('this server was built without lz4: nothing to compare');
      await admin.unsafe(`alter table agent_message alter column parts set compression ${method}`);
      await admin.end();
      const client = postgres(server.appUrl(database), { max: 8, onnotice: () => {} });
      const store = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase }).forTenant(
        randomUUID(),
      );
      const threads: string[] = [];
      for (let index = 0; index < THREADS; index++) threads.push((await store.createThread()).id);
      setups.push({ method, client, store, threads, next: 0 });
    }
    const append = async (setup: Setup, count: number) => {
      let sent = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (sent < count) {
            sent++;
            const k = setup.next++;
            await setup.store.appendMessage(setup.threads[k % THREADS]!, factory.make(k));
          }
        }),
      );
    };
    const page = async (setup: Setup, count: number) => {
      for (let call = 0; call < count; call++)
        await setup.store.listChatMessages(setup.threads[call % THREADS]!, { limit: 50 });
    };
    // Warm-up: the JIT, the connections' prepared statements, and threads long enough for a page of 50.
    for (const setup of setups) {
      await append(setup, appends);
      await page(setup, 100);
    }
    type Figures = ReturnType<typeof cpuPerOperation> & { wallMs: number };
    const results = new Map<string, Figures[]>();
    const record = (key: string, figures: Figures) => results.set(key, [...(results.get(key) ?? []), figures]);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? setups : [...setups].reverse();
      for (const setup of order) {
        let before = await meter();
        await append(setup, appends);
        let after = await meter();
        record(`append ${setup.method}`, {
          ...cpuPerOperation(before, after, appends),
          wallMs: (after.wallMs - before.wallMs) / appends,
        });
        before = await meter();
        await page(setup, PAGES);
        after = await meter();
        record(`page ${setup.method}`, {
          ...cpuPerOperation(before, after, PAGES),
          wallMs: (after.wallMs - before.wallMs) / PAGES,
        });
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const of = (key: string, field: keyof Figures) => median(results.get(key)!.map((figures) => figures[field]));
    console.log(
      `| operation (median of ${rounds} rounds) | method | client CPU ms | server CPU ms | WAL B | wall ms |`,
    );
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const operation of ['append', 'page'])
      for (const method of METHODS) {
        const key = `${operation} ${method}`;
        console.log(
          `| ${operation === 'append' ? 'W1 append (8 in flight)' : 'newest-50 page (listChatMessages)'} | ${method} | ` +
            `${of(key, 'clientMs').toFixed(3)} | ${of(key, 'serverMs').toFixed(3)} | ` +
            `${operation === 'append' ? of(key, 'walBytes').toFixed(0) : '–'} | ${of(key, 'wallMs').toFixed(3)} |`,
        );
      }
    for (const operation of ['append', 'page']) {
      const ratio = (field: keyof Figures) =>
        (of(`${operation} lz4`, field) / of(`${operation} pglz`, field)).toFixed(2);
      console.log(
        `${operation}: lz4 ÷ pglz: server CPU ${ratio('serverMs')}, client + server CPU ${ratio('totalMs')}, wall ${ratio('wallMs')}`,
      );
    }
    for (const setup of setups) await setup.client.end();
  } finally {
    server.stop();
  }
}

runMain(main);
