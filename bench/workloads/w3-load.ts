// W3 load on PostgreSQL: seeds agent-history, the bare table and Mastra once (seeding is not a result), then
// reads them in every run (see w3-agent-history.ts and w3-peers.ts for what is timed).
import postgres from 'postgres';
import type { BenchConfig } from '../config.js';
import type { MessageFactory } from '../messages.js';
import { openAgentHistory } from '../peers/agent-history-peer.js';
import { bareInsertPeer } from '../peers/bare-insert-peer.js';
import { mastraPeer, type MastraPeer } from '../peers/mastra-peer.js';
import type { BenchServer } from '../server.js';
import {
  createGuardedChatPage,
  loadTemplates,
  measureAgentHistoryThreads,
  seedAgentHistoryThreads,
  type AdminQuery,
  type SeededThread,
} from './w3-agent-history.js';
import {
  measureBareThreads,
  measureChatbotThreads,
  measureMastraThreads,
  seedBareThreads,
  seedChatbotThreads,
  seedMastraThreads,
} from './w3-peers.js';
import { drizzleChatbotPeer, type DrizzleChatbotPeer } from '../peers/drizzle-chatbot-peer.js';

interface W3Dependencies {
  server: BenchServer;
  factory: MessageFactory;
  config: BenchConfig;
  log: (...parts: unknown[]) => void;
}

const dbName = (...parts: string[]) => `bench_${parts.join('_')}`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** W3 threads are seeded once (seeding is not a result) and read in every run. */
export async function prepareW3({ server, factory, config, log }: W3Dependencies) {
  const { sizes, mastraMaxSize } = config.w3;
  const started = performance.now();
  const ahDatabase = dbName('w3', 'agent_history');
  await server.createDatabase(ahDatabase, { migrated: true });
  const ah = openAgentHistory(server.appUrl(ahDatabase), 2);
  const ahAdmin = postgres(server.adminUrl(ahDatabase), { max: 1, onnotice: () => {} });
  const admin: AdminQuery = (text, params) =>
    ahAdmin.unsafe(text, params as never[]) as unknown as Promise<Record<string, unknown>[]>;
  await loadTemplates(admin, factory);
  const ahThreads = await seedAgentHistoryThreads({
    store: ah.store,
    admin,
    sizes,
    snapshotTail: config.w3.snapshotTail,
  });
  await createGuardedChatPage(admin);
  log(`  w3 seeded agent-history ${sizes.join(', ')} in ${seconds(performance.now() - started)}`);
  const state: {
    ah: typeof ah;
    ahAdmin: postgres.Sql;
    admin: AdminQuery;
    ahThreads: SeededThread[];
    databases: string[];
    bare?: Awaited<ReturnType<typeof bareInsertPeer>>;
    bareThreads?: { size: number; threadId: string }[];
    chatbot?: DrizzleChatbotPeer;
    chatbotAdmin?: postgres.Sql;
    chatbotThreads?: { size: number; threadId: string }[];
    mastra?: MastraPeer;
    mastraAdmin?: postgres.Sql;
    mastraThreads?: { size: number; threadId: string; ids: string[] }[];
    seedMs: number;
  } = { ah, ahAdmin, admin, ahThreads, databases: [ahDatabase], seedMs: 0 };
  if (config.peers.includes('bare-insert')) {
    const database = dbName('w3', 'bare_insert');
    await server.createDatabase(database);
    state.databases.push(database);
    state.bare = await bareInsertPeer({ adminUrl: server.adminUrl(database), poolSize: 2 });
    state.bareThreads = await seedBareThreads(state.bare.sql, factory, sizes);
  }
  if (config.peers.includes('drizzle-chatbot')) {
    const database = dbName('w3', 'drizzle_chatbot');
    await server.createDatabase(database);
    state.databases.push(database);
    state.chatbot = await drizzleChatbotPeer({ adminUrl: server.adminUrl(database), poolSize: 2 });
    state.chatbotAdmin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
    state.chatbotThreads = await seedChatbotThreads(state.chatbot, state.chatbotAdmin, factory, sizes);
  }
  if (config.peers.includes('mastra-pg')) {
    const database = dbName('w3', 'mastra_pg');
    await server.createDatabase(database);
    state.databases.push(database);
    state.mastra = await mastraPeer({ adminUrl: server.adminUrl(database), poolSize: 2 });
    state.mastraAdmin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
    state.mastraThreads = await seedMastraThreads(
      state.mastra,
      state.mastraAdmin,
      factory,
      sizes.filter((size) => size <= mastraMaxSize),
    );
  }
  await server.checkpoint();
  state.seedMs = performance.now() - started;
  log(`  w3 seeding done in ${seconds(state.seedMs)}`);
  return state;
}
export type W3State = Awaited<ReturnType<typeof prepareW3>>;

export async function measureW3(state: W3State, { config, log }: Pick<W3Dependencies, 'config' | 'log'>) {
  const timing = { rounds: config.w3.rounds, wholeRounds: config.w3.wholeRounds, wholeMax: config.w3.wholeMax };
  const result: Record<string, unknown> = {};
  const { client, store } = state.ah;
  result['agent-history'] = await measureAgentHistoryThreads({
    store,
    admin: state.admin,
    threads: state.ahThreads,
    ...timing,
    floor: async (threadId) => [
      ...(await client`select * from bench_guarded_chat_page(${store.tenantId}, ${threadId})`),
    ],
  });
  if (state.bare) result['bare-insert'] = await measureBareThreads(state.bare.sql, state.bareThreads!, timing);
  if (state.chatbot)
    result['drizzle-chatbot'] = await measureChatbotThreads(state.chatbot, state.chatbotThreads!, timing);
  if (state.mastra) result['mastra-pg'] = await measureMastraThreads(state.mastra, state.mastraThreads!, timing);
  for (const [peer, rows] of Object.entries(result)) {
    for (const row of rows as { size: number; [op: string]: unknown }[]) {
      const ops = Object.entries(row)
        .filter(([, value]) => (value as { ms?: unknown })?.ms)
        .map(
          ([op, value]) =>
            `${op} ${(value as { ms: { p50: number } }).ms.p50}${(value as { correct: boolean }).correct ? '' : ' (WRONG)'}`,
        );
      log(`  w3 ${peer.padEnd(14)} ${String(row.size).padStart(6)}: ${ops.join(', ')} ms`);
    }
  }
  return result;
}

/** Closes the W3 pools. */
export async function closeW3(state: W3State) {
  await state.ah.client.end({ timeout: 5 }).catch(() => {});
  await state.ahAdmin.end({ timeout: 5 }).catch(() => {});
  await state.bare?.close().catch(() => {});
  await state.chatbot?.close().catch(() => {});
  await state.chatbotAdmin?.end({ timeout: 5 }).catch(() => {});
  await state.mastra?.close().catch(() => {});
  await state.mastraAdmin?.end({ timeout: 5 }).catch(() => {});
}
