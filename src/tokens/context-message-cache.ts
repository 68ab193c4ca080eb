import type { ContextMessageCache } from '../model/context-store.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';

/** Options of {@link createContextMessageCache}. */
export interface ContextMessageCacheOptions {
  /**
   * The most bytes of stored messages whose derived forms are kept (each weighs its row's `byteSize`); the least
   * recently used go first. The derived forms share their large values (texts, tool outputs) with the messages.
   * The heap it takes is about twice the bytes (measured on generated agent turns).
   * @default 33_554_432 (32 MiB)
   */
  maxBytes?: number;
}

/** A cache shared by the stores of one database, handing each tenant and thread its own part. */
export interface SharedContextMessageCache {
  /** The part of the cache for one scope (the Postgres store uses the tenant and thread ids). */
  scoped(scope: string): ContextMessageCache;
  /** Entries held now. */
  readonly size: number;
  /** Bytes held now (the sum of the weights). */
  readonly bytes: number;
  /** Forgets everything. */
  clear(): void;
}

// An entry, in a list from the least to the most recently used.
interface Entry {
  scope: string;
  rows: Map<string, Entry>;
  id: string;
  version: string;
  value: object;
  bytes: number;
  older: Entry | null;
  newer: Entry | null;
}

/**
 * A least-recently-used cache of what the context engine derives from stored messages, bounded by their bytes.
 * The Postgres store makes one per `createAgentHistory` (its `contextCache` option) and gives each
 * `contextStore(threadId)` the part of its tenant and thread, so one tenant's entries are never another's, even
 * for a row id both have. A row holds one version: storing a newer one (a redacted message, say) drops the old.
 */
export function createContextMessageCache({
  maxBytes = 33_554_432,
}: ContextMessageCacheOptions = {}): SharedContextMessageCache {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new InvalidArgumentError({
      argument: 'maxBytes',
      value: maxBytes,
      message: 'expected a non-negative integer (bytes).',
    });
  const list = createEntryList();
  return {
    scoped(scope) {
      const { scopes } = list;
      // Looked up on every call: the part is dropped when it empties, and made again when it fills.
      const rowsOf = () => {
        let rows = scopes.get(scope);
        if (!rows) scopes.set(scope, (rows = new Map()));
        return rows;
      };
      return {
        get(id, version) {
          const entry = scopes.get(scope)?.get(id);
          if (!entry || entry.version !== version) return undefined;
          if (entry !== list.newest) {
            list.unlink(entry);
            list.append(entry);
          }
          return entry.value;
        },
        set(id, version, value, weight) {
          const held = scopes.get(scope)?.get(id);
          if (held) list.remove(held);
          // A row withdrawn since (redacted): the caller may have read it before, and must not put it back.
          if (list.dropped.has(`${scope}\u0000${id}`)) return;
          const entryBytes = Number.isFinite(weight) && weight > 0 ? Math.ceil(weight) : 1;
          if (entryBytes > maxBytes) return;
          const rows = rowsOf();
          const entry: Entry = { scope, rows, id, version, value, bytes: entryBytes, older: null, newer: null };
          rows.set(id, entry);
          list.append(entry);
          list.size += 1;
          list.bytes += entryBytes;
          while (list.bytes > maxBytes && list.oldest) list.remove(list.oldest);
        },
        delete(id) {
          const held = scopes.get(scope)?.get(id);
          if (held) list.remove(held);
        },
        withdraw(id) {
          const held = scopes.get(scope)?.get(id);
          if (held) list.remove(held);
          list.drop(`${scope}\u0000${id}`);
        },
      };
    },
    get size() {
      return list.size;
    },
    get bytes() {
      return list.bytes;
    },
    clear() {
      while (list.oldest) list.remove(list.oldest);
      list.dropped.clear();
    },
  };
}

// How many withdrawn rows are remembered (about 100 bytes each).
const DROPPED_ROWS = 4096;

// The entries of every scope in one list, least recently used first, with the totals the bound is checked on.
function createEntryList() {
  const list = {
    scopes: new Map<string, Map<string, Entry>>(),
    oldest: null as Entry | null,
    newest: null as Entry | null,
    size: 0,
    bytes: 0,
    // The rows withdrawn last (scope and id), oldest first: a request that read one before it was withdrawn (a
    // redaction committed while it ran) does not store it again. Bounded: a row's entry is only ever refused. Only a
    // redaction withdraws: the rows a load finds no longer reaching the model are deleted, so a thread of many
    // excluded messages never pushes a redaction out of it.
    dropped: new Set<string>(),
    drop(key: string) {
      list.dropped.delete(key);
      list.dropped.add(key);
      if (list.dropped.size > DROPPED_ROWS) list.dropped.delete(list.dropped.values().next().value!);
    },
    unlink(entry: Entry) {
      if (entry.older) entry.older.newer = entry.newer;
      else list.oldest = entry.newer;
      if (entry.newer) entry.newer.older = entry.older;
      else list.newest = entry.older;
      entry.older = entry.newer = null;
    },
    append(entry: Entry) {
      entry.older = list.newest;
      if (list.newest) list.newest.newer = entry;
      else list.oldest = entry;
      list.newest = entry;
    },
    remove(entry: Entry) {
      list.unlink(entry);
      entry.rows.delete(entry.id);
      // A thread's part goes with its last entry: a cache that saw many threads holds no empty parts.
      if (entry.rows.size === 0 && list.scopes.get(entry.scope) === entry.rows) list.scopes.delete(entry.scope);
      list.size -= 1;
      list.bytes -= entry.bytes;
    },
  };
  return list;
}
