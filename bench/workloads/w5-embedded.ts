// W5 the embedded default: the same store on PGlite (in memory, one connection, every statement serialized):
// W1 against a bare INSERT on the same PGlite, and W3's reads. PGlite is created and migrated once per process.
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { createAgentHistory } from '../../src/store/create-agent-history.js';
import { migrate } from '../../src/store/migrate.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { loadWholeThread, searchFromEnv } from '../peers/agent-history-peer.js';
import { BARE_DDL } from '../peers/bare-insert-peer.js';
import { combiningAppender, floorPrefix, guardedDdl, guardedTokenCount } from '../peers/guarded-insert-peer.js';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import type { AppendPeer } from '../peers/peer.js';
import type { AdminQuery } from './w3-agent-history.js';
import { cpuMeter, type CpuMeter } from '../cpu.js';

/** PGlite runs in this process: its CPU is client CPU; its WAL position is read through its one connection. */
export function embeddedMeter({ client }: Embedded): CpuMeter {
  return cpuMeter(null, async () => {
    const { rows } = await client.query<{ bytes: string }>(
      `select (pg_current_wal_insert_lsn() - '0/0')::text as bytes`,
    );
    return Number(rows[0]!.bytes);
  });
}

export async function openEmbedded() {
  const started = performance.now();
  const client = await PGlite.create();
  const createMs = performance.now() - started;
  const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
  await migrate(db);
  const migrateMs = performance.now() - started - createMs;
  for (const statement of BARE_DDL) await client.exec(statement);
  for (const search of [false, true])
    for (const statement of guardedDdl('agent_history_app', { switchRole: true, search })) await client.exec(statement);
  const admin: AdminQuery = async (text, params) => (await client.query<Record<string, unknown>>(text, params)).rows;
  const history = createAgentHistory({ db, search: searchFromEnv() });
  return {
    client,
    admin,
    createMs,
    migrateMs,
    /** A fresh tenant's store (the PGlite login is superuser; every store call switches to agent_history_app, so RLS applies). */
    tenant: () => history.forTenant(randomUUID()),
    /** Indexes what `search: 'background'` left pending (nothing in the other modes). */
    settle: () => history.drainSearch(),
    close: () => client.close(),
  };
}

export type Embedded = Awaited<ReturnType<typeof openEmbedded>>;

export function embeddedAgentHistoryPeer(
  embedded: Embedded,
): Pick<AppendPeer, 'createThread' | 'append' | 'loadAllIds' | 'settle'> {
  const store = embedded.tenant();
  return {
    settle: embedded.settle,
    createThread: async () => (await store.createThread()).id,
    append: async (threadId, message) => {
      await store.appendMessage(threadId, message);
    },
    loadAllIds: async (threadId) => (await loadWholeThread(store, threadId)).map((stored) => stored.message.id),
  };
}

export function embeddedBarePeer({ client }: Embedded): Pick<AppendPeer, 'createThread' | 'append' | 'loadAllIds'> {
  return {
    createThread: async () => randomUUID(),
    append: async (threadId, message) => {
      await client.query('insert into raw_message (id, thread_id, role, parts) values ($1, $2, $3, $4::text::json)', [
        message.id,
        threadId,
        message.role,
        JSON.stringify(message.parts),
      ]);
    },
    // PGlite's now() has millisecond resolution, so created_at ties; the inserting transaction's id (one autocommit
    // transaction per INSERT on the single connection, so increasing) breaks them as the server's microseconds
    // do on PostgreSQL. (ctid does not: the free-space map puts small rows into earlier pages.)
    loadAllIds: async (threadId) =>
      (
        await client.query<{ id: string }>(
          'select id from raw_message where thread_id = $1 order by created_at, xmin::text::bigint',
          [threadId],
        )
      ).rows.map((row) => row.id),
  };
}

/**
 * The `guarded-insert` floor on the same PGlite: agent-history's guarantees in their plainest form, one statement per
 * append (see `bench/peers/guarded-insert-peer.ts`); its function switches to the application role, so row-level
 * security applies as it does to the store. With `search`, the floor of a searchable log (every message indexed in
 * its append); with `combine`, appends that arrive while a statement runs are sent together as the next one.
 */
export async function embeddedGuardedPeer(
  { client }: Embedded,
  { search = false, combine = false } = {},
): Promise<Pick<AppendPeer, 'createThread' | 'append' | 'loadAllIds'>> {
  const prefix = floorPrefix(search);
  const tokenCounter = await loadO200kTokenCounter();
  const tenantId = randomUUID();
  // The combining floor: one statement at a time, as the store's write combining runs on PGlite.
  const combined = combine
    ? combiningAppender(
        (items, parts) =>
          client.query(`select ${prefix}_append_batch($1, $2::text::jsonb, $3::text::json)`, [tenantId, items, parts]),
        1,
      )
    : null;
  return {
    createThread: async () => {
      const id = randomUUID();
      await client.query(`insert into ${prefix}_thread (tenant_id, id) values ($1, $2)`, [tenantId, id]);
      return id;
    },
    append: async (threadId, message) => {
      const tokens = guardedTokenCount(message, tokenCounter);
      if (combined) return combined({ thread: threadId, id: message.id, role: message.role, tokens }, message.parts);
      await client.query(`select ${prefix}_append($1, $2, $3, $4, $5::text::json, $6)`, [
        tenantId,
        threadId,
        message.id,
        message.role,
        JSON.stringify(message.parts),
        tokens,
      ]);
    },
    loadAllIds: async (threadId) =>
      (
        await client.query<{ message_id: string }>(
          `select message_id from ${prefix}_message where tenant_id = $1 and thread_id = $2 order by sequence`,
          [tenantId, threadId],
        )
      ).rows.map((row) => row.message_id),
  };
}
