import type { ModelMessage } from 'ai';
import type { ContextMessage, ContextMessageCache } from '../../model/context-store.js';
import { convertUIMessageToModelMessages } from '../../tokens/convert-ui-message.js';
import { modelPartKinds, type ModelPartKind } from '../../tokens/model-part-kinds.js';
import type { MessageSegment } from '../segments/context-segment.js';

/**
 * What the engine keeps of a stored row in a store's cache (`ContextStore.messageCache`), each piece made the first
 * time a request needs it and then kept for the row's version: its model messages, whether it passed validation
 * unchanged, and the kinds of its model parts (the window sizes rows it never converts from them).
 */
export interface CachedRow {
  /** The model messages, frozen (message, content and parts), once converted. */
  messages?: ModelMessage[];
  /** Ids of the counters already seeded with the row's `partTokenCounts`. */
  seeded: Set<string>;
  /** True once the row passed the validate stage unchanged. */
  validated: boolean;
  /** `modelPartKinds` of the message, once asked for. */
  kinds?: readonly ModelPartKind[];
  /** The segment made from the messages and the stored count (frozen), reused while the row's fields match. */
  segment?: MessageSegment;
  /** The row's fields the entry was made for besides its content version ({@link cachedVersion}). */
  fields: RowFields;
}

/** What an entry is valid for besides the content version (see {@link cachedVersion}). */
interface RowFields {
  created: number | undefined;
  status: ContextMessage['status'];
  schemaVersion: ContextMessage['schemaVersion'];
  role: string;
  messageId: string;
  tokenCount: ContextMessage['tokenCount'];
  tokenCounterId: ContextMessage['tokenCounterId'];
  partTokenCounts: readonly number[] | undefined;
}

/**
 * What a cached row is valid for: its `contentVersion` (the store raises it on every change of the parts), the key
 * the cache holds it under; and, checked against the entry itself ({@link RowFields}), when it was written (a row id
 * that comes back after a hard delete is another row), status, schema version, role and message id, and its stored
 * counts (a recount keeps the version, but the cached parts keep the per-part counts seeded first). Undefined
 * without a row id or a version (an earlier stage changed the message, or the store has no ids): such a row is never
 * cached.
 */
export function cachedVersion(stored: ContextMessage): string | undefined {
  if (typeof stored.rowId !== 'string' || !Number.isSafeInteger(stored.contentVersion)) return undefined;
  if (typeof stored.message !== 'object' || stored.message === null) return undefined;
  return String(stored.contentVersion);
}

/**
 * The cache's entry for the row at its version, made when `create` (undefined when the row cannot be cached). Inside
 * {@link withRowLookups}, an entry found is found again for the same row object without asking the cache.
 */
export function cachedRow(stored: ContextMessage, cache: ContextMessageCache, create: boolean): CachedRow | undefined {
  const lookups = cache === lookupCache ? rowLookups : undefined;
  const found = lookups?.get(stored);
  if (found) return found;
  const version = cachedVersion(stored);
  if (version === undefined) return undefined;
  let row = cache.get(stored.rowId!, version) as CachedRow | undefined;
  if (row && !sameFields(row.fields, stored)) row = undefined;
  if (!row && create) {
    row = { seeded: new Set(), validated: false, fields: fieldsOf(stored) };
    cache.set(stored.rowId!, version, row, rowBytes(stored));
  }
  if (row) lookups?.set(stored, row);
  return row;
}

// Compared field by field: a version string of them all, made for every row of every load, cost more than the rest
// of the lookup.
function fieldsOf(stored: ContextMessage): RowFields {
  return {
    created: stored.createdAt instanceof Date ? stored.createdAt.getTime() : undefined,
    status: stored.status,
    schemaVersion: stored.schemaVersion,
    role: stored.message.role,
    messageId: stored.message.id,
    tokenCount: stored.tokenCount,
    tokenCounterId: stored.tokenCounterId,
    partTokenCounts: Array.isArray(stored.partTokenCounts) ? Object.freeze([...stored.partTokenCounts]) : undefined,
  };
}

function sameFields(fields: RowFields, stored: ContextMessage): boolean {
  const created = stored.createdAt instanceof Date ? stored.createdAt.getTime() : undefined;
  if (fields.created !== created && !(Number.isNaN(fields.created) && Number.isNaN(created))) return false;
  if (
    fields.status !== stored.status ||
    fields.schemaVersion !== stored.schemaVersion ||
    fields.role !== stored.message.role ||
    fields.messageId !== stored.message.id ||
    fields.tokenCount !== stored.tokenCount ||
    fields.tokenCounterId !== stored.tokenCounterId
  )
    return false;
  const counts = Array.isArray(stored.partTokenCounts) ? stored.partTokenCounts : undefined;
  const held = fields.partTokenCounts;
  if (counts === undefined || held === undefined) return counts === held;
  if (counts.length !== held.length) return false;
  for (let index = 0; index < counts.length; index++) if (!Object.is(counts[index], held[index])) return false;
  return true;
}

let lookupCache: ContextMessageCache | undefined;
let rowLookups: Map<ContextMessage, CachedRow> | undefined;

/**
 * Runs one synchronous load of a thread (the window, validate and convert stages ask for each row's entry in turn)
 * with each row's entry found in `cache` once per row object: the rows cannot change while it runs. The lookups are
 * a map dropped with the load (a weak map keyed by a few hundred short-lived rows costs the garbage collector more).
 */
export function withRowLookups<T>(cache: ContextMessageCache | undefined, load: () => T): T {
  if (!cache) return load();
  const outer = { lookupCache, rowLookups };
  lookupCache = cache;
  rowLookups = new Map();
  try {
    return load();
  } finally {
    ({ lookupCache, rowLookups } = outer);
  }
}

/**
 * The row's entry with its model messages, converted (with the default conversion) and frozen the first time, with
 * every object and array in them (a tool result's value, provider options; binary data cannot be): the engine builds
 * new messages for every change, and a caller that changed one in place would change every later request. Undefined
 * for a row that cannot be cached.
 */
export function cachedConversion(stored: ContextMessage, cache: ContextMessageCache): CachedRow | undefined {
  const row = cachedRow(stored, cache, true);
  if (!row || row.messages) return row;
  const messages = convertUIMessageToModelMessages(stored.message);
  for (const message of messages) deepFreeze(message);
  row.messages = Object.freeze(messages) as ModelMessage[];
  return row;
}

/** `modelPartKinds` of the row's message, kept in its cache entry when it has one. */
export function cachedPartKinds(
  stored: ContextMessage,
  cache: ContextMessageCache | undefined,
): readonly ModelPartKind[] {
  const row = cache ? cachedRow(stored, cache, true) : undefined;
  if (!row) return modelPartKinds(stored.message);
  return (row.kinds ??= Object.freeze(modelPartKinds(stored.message)));
}

// What the row weighs against the cache's bound: the store's byte size, or without a usable one (a custom store's
// rows), the length of its parts serialized, measured once when its entry is made.
function rowBytes(stored: ContextMessage): number {
  const { byteSize } = stored;
  if (typeof byteSize === 'number' && Number.isFinite(byteSize) && byteSize > 0) return byteSize;
  return JSON.stringify(stored.message.parts)?.length ?? 1;
}

// Freezes plain objects and arrays, through every level (the stored values the messages share are frozen with them).
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}
