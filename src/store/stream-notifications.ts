import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

/** The channel every chunk log notifies on. */
export const STREAM_CHUNK_CHANNEL = 'agent_history_stream';

// What a driver's LISTEN looks like: postgres-js resolves `{ unlisten }`, PGlite an unsubscribe function.
type ListeningClient = {
  listen(channel: string, onNotify: (payload: string) => void): Promise<unknown>;
};

interface Listener {
  subscribers: Map<string, Set<() => void>>;
  /** Resolves to the unlisten function once LISTEN is in effect, or to null when it failed. */
  listening: Promise<(() => Promise<void>) | null> | null;
}

const listeners = new WeakMap<object, Listener>();

// The payload names no tenant, thread or message: every session of the database may LISTEN on the channel.
function keyOf(tenantId: string, threadId: string, messageId: string): string {
  return createHash('sha256').update(`${tenantId}\u0000${threadId}\u0000${messageId}`).digest('hex').slice(0, 32);
}

/**
 * Sends the notification that a message's log grew (Postgres delivers it when the transaction commits), and lets the
 * commit return before its WAL is flushed (`synchronous_commit = off` for this transaction only): the log is a copy of
 * a stream that the assistant message's checkpoints already keep, so a server crash may lose its last batches (a
 * reader then ends with the stored answer) but no commit waits for the disk.
 */
export async function notifyStreamChunks(
  tx: TenantTransaction,
  tenantId: string,
  threadId: string,
  messageId: string,
): Promise<void> {
  await tx.execute(
    sql`select pg_notify(${STREAM_CHUNK_CHANNEL}, ${keyOf(tenantId, threadId, messageId)}), set_config('synchronous_commit', 'off', true)`,
  );
}

/**
 * Calls `onNotify` whenever a batch is appended to the message's log, from any process, through one LISTEN per
 * database client (postgres-js: a dedicated connection; PGlite: in process). Resolves, once listening, to the
 * function that stops it; resolves to null when the client cannot LISTEN (another driver, or PgBouncer in
 * transaction mode), so that the caller polls instead.
 */
export async function subscribeStreamChunks(
  context: StoreContext,
  threadId: string,
  messageId: string,
  onNotify: () => void,
): Promise<(() => void) | null> {
  const client = listeningClientOf(context.db);
  if (!client) return null;
  let listener = listeners.get(client);
  if (!listener) listeners.set(client, (listener = { subscribers: new Map(), listening: null }));
  const key = keyOf(context.tenantId, threadId.toLowerCase(), messageId);
  const set = listener.subscribers.get(key) ?? new Set();
  listener.subscribers.set(key, set);
  set.add(onNotify);
  const current = listener;
  current.listening ??= listen(client, current);
  const unlisten = await current.listening;
  const unsubscribe = () => {
    set.delete(onNotify);
    if (set.size === 0 && current.subscribers.get(key) === set) current.subscribers.delete(key);
    if (current.subscribers.size === 0 && current.listening) {
      const stopping = current.listening;
      current.listening = null;
      void stopping.then((stop) => stop?.()).catch(() => {});
    }
  };
  if (!unlisten) {
    unsubscribe();
    return null;
  }
  return unsubscribe;
}

async function listen(client: ListeningClient, listener: Listener): Promise<(() => Promise<void>) | null> {
  try {
    const result = await client.listen(STREAM_CHUNK_CHANNEL, (payload) => {
      for (const onNotify of listener.subscribers.get(payload) ?? []) onNotify();
    });
    if (typeof result === 'function') return async () => void (await result());
    const unlisten = (result as { unlisten?: () => Promise<unknown> } | undefined)?.unlisten;
    return unlisten ? async () => void (await unlisten()) : async () => {};
  } catch {
    listener.listening = null;
    return null;
  }
}

// The store otherwise never reaches past Drizzle; LISTEN has no Drizzle API, so the driver's own is used if it has one.
function listeningClientOf(db: AgentHistoryDatabase): ListeningClient | null {
  const client = (db as { $client?: unknown }).$client as Partial<ListeningClient> | undefined;
  return client && typeof client.listen === 'function' ? (client as ListeningClient) : null;
}
