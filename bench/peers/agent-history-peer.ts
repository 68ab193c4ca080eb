// agent-history as an application uses it: `forTenant(t).appendMessage(...)` over a postgres-js pool logged in as
// a plain login role, so every call switches to `agent_history_app` and row-level security applies.
import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createAgentHistory } from '../../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import type { TenantHistory } from '../../src/store/tenant-history.js';
import type { AppendBatchingOptions } from '../../src/store/append-batcher.js';
import type { AppendPeer } from './peer.js';
import type { SearchIndexing } from '../../src/store/store-context-parts.js';

/** The store of one tenant, as the benchmarks drive it. */
export type TenantStore = TenantHistory;

/** `BENCH_APPEND_BATCHING=off` turns write combining off; a number sets `maxInFlight`. Default: the store's default. */
function appendBatchingFromEnv() {
  const value = process.env.BENCH_APPEND_BATCHING;
  if (value === undefined || value === '') return undefined;
  if (value === 'off') return false as const;
  return { maxInFlight: Number(value) };
}

/**
 * `BENCH_SEARCH=background`, `deferred` or `off` picks the store's search indexing (`createAgentHistory({ search })`).
 * Default: inline.
 */
export function searchFromEnv(): SearchIndexing {
  const value = process.env.BENCH_SEARCH;
  if (value === 'background') return 'background';
  if (value === 'deferred') return 'deferred';
  if (value === 'off') return false;
  return 'inline';
}

/** A pool as the app login and the store of one fresh tenant. */
export function openAgentHistory(
  appUrl: string,
  poolSize: number,
  appendBatching: AppendBatchingOptions | false | undefined = appendBatchingFromEnv(),
  search: SearchIndexing = searchFromEnv(),
) {
  const client = postgres(appUrl, { max: poolSize, onnotice: () => {} });
  const history = createAgentHistory({
    db: drizzle({ client }) as unknown as AgentHistoryDatabase,
    appendBatching,
    search,
  });
  const tenantId = randomUUID();
  return { client, history, tenantId, store: history.forTenant(tenantId) };
}

/** Every page of a thread, newest page first, following `nextCursor` (keyset) until the oldest. */
async function allPages<ENTRY>(
  read: (before: number | undefined) => Promise<{ messages: ENTRY[]; nextCursor: number | null }>,
): Promise<ENTRY[][]> {
  const pages = [];
  let before: number | undefined;
  do {
    const page = await read(before);
    pages.push(page.messages);
    before = page.nextCursor ?? undefined;
  } while (before !== undefined);
  return pages;
}

/** Every message of a thread, oldest first, paging through `listMessages` (each page newest first). */
export async function loadWholeThread(store: TenantStore, threadId: string, pageSize = 500) {
  const pages = await allPages((before) => store.listMessages(threadId, { limit: pageSize, before }));
  return pages.flat().reverse();
}

/** Every message of a thread as a chat window reads it, oldest first, paging through `listChatMessages`. */
export async function loadWholeChat(store: TenantStore, threadId: string, pageSize = 500) {
  const pages = await allPages((before) => store.listChatMessages(threadId, { limit: pageSize, before }));
  return pages.reverse().flat();
}

/** What W2 checks on agent-history's own order key, by direct SQL. */
export interface SequenceCheck {
  rows: number;
  distinctSequences: number;
  minSequence: number;
  maxSequence: number;
  nextSequence: number;
  /** Adjacent pairs (by sequence) whose commit timestamps go backwards: a later sequence committed first. */
  commitOrderInversions: number;
  /** Adjacent pairs (by sequence) with the same commit timestamp (not an inversion; 1 µs resolution). */
  commitTimestampTies: number;
  /** Of those, pairs written by two different transactions (the rest are messages of one batch, one commit). */
  tiesAcrossTransactions: number;
}

export function agentHistoryPeer({
  appUrl,
  adminUrl,
  poolSize,
  name = 'agent-history',
  appendBatching,
  search,
}: {
  appUrl: string;
  adminUrl: string;
  poolSize: number;
  name?: string;
  appendBatching?: AppendBatchingOptions | false;
  search?: SearchIndexing;
}): AppendPeer & {
  checkSequences(threadId: string): Promise<SequenceCheck>;
} {
  const { client, history, store } = openAgentHistory(appUrl, poolSize, appendBatching, search);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  return {
    name,
    createThread: async () => (await store.createThread()).id,
    append: async (threadId, message) => {
      await store.appendMessage(threadId, message);
    },
    settle: () => history.drainSearch(),
    loadAllIds: async (threadId) => (await loadWholeThread(store, threadId)).map((stored) => stored.message.id),
    idsByCommit: async (threadId) =>
      (
        await admin<{ message_id: string }[]>`select message_id from agent_message where thread_id = ${threadId}
        order by pg_xact_commit_timestamp(xmin), sequence`
      ).map((row) => row.message_id),
    checkSequences: async (threadId) => {
      const [row] = await admin<SequenceCheck[]>`
        with m as (
          select sequence, pg_xact_commit_timestamp(xmin) as committed_at, xmin::text as tx,
            lag(pg_xact_commit_timestamp(xmin)) over (order by sequence) as previous_committed_at,
            lag(xmin::text) over (order by sequence) as previous_tx
          from agent_message where thread_id = ${threadId})
        select count(*)::int as "rows", count(distinct sequence)::int as "distinctSequences",
          coalesce(min(sequence), 0)::int as "minSequence", coalesce(max(sequence), 0)::int as "maxSequence",
          (select next_sequence from agent_thread where id = ${threadId})::int as "nextSequence",
          count(*) filter (where committed_at < previous_committed_at)::int as "commitOrderInversions",
          count(*) filter (where committed_at = previous_committed_at)::int as "commitTimestampTies",
          count(*) filter (where committed_at = previous_committed_at and tx <> previous_tx)::int as "tiesAcrossTransactions"
        from m`;
      return row!;
    },
    close: async () => {
      await client.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
    },
  };
}
