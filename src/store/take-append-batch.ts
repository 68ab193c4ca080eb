import type { Context } from '@opentelemetry/api';
import type { AppendItem } from './append-statements.js';

/** One append waiting in the batcher's queue, with its caller's promise. */
export interface QueuedAppend {
  /** The tenant the append belongs to (a statement holds one tenant only). */
  tenantId: string;
  /** The role the statement switches to. */
  appRole: string | null;
  /** The append itself. */
  item: AppendItem;
  /** Settles the caller's promise with the rows the append functions returned for this item. */
  resolve(rows: unknown[]): void;
  /** Settles the caller's promise with the error this item got. */
  reject(error: unknown): void;
  /**
   * The caller's async context: a statement is sent in its first item's, so that a driver's tracing nests the
   * query under a caller still waiting for it, and its span (the store method's) is told how many appends its
   * statement combined.
   */
  context: Context;
}

/** The key of a queued append's thread: at most one statement per key is in flight. */
export function appendThreadKey(entry: QueuedAppend): string {
  return `${entry.tenantId}/${entry.item.threadId}`;
}

/** What {@link takeAppendBatch} needs to know besides the queue. */
export interface TakeAppendBatchOptions {
  /** The threads with a statement in flight, by {@link appendThreadKey}: their appends wait. */
  busyThreads: ReadonlySet<string>;
  /** The most messages in one statement. */
  maxBatchSize: number;
  /** The most serialized message bytes in one statement (a single larger message is still taken alone). */
  maxBatchBytes: number;
}

/**
 * Takes the oldest queued append whose thread has no statement in flight, and every later one of its tenant
 * that fits, keeping their order. A thread's appends never overtake each other: once one stays behind, every
 * later one of that thread does too. Returns the batch (empty when every queued append waits for its thread) and
 * the queue without it.
 */
export function takeAppendBatch(
  queue: QueuedAppend[],
  { busyThreads, maxBatchSize, maxBatchBytes }: TakeAppendBatchOptions,
): { batch: QueuedAppend[]; rest: QueuedAppend[] } {
  const head = queue.find((entry) => !busyThreads.has(appendThreadKey(entry)));
  if (!head) return { batch: [], rest: queue };
  const batch: QueuedAppend[] = [];
  const rest: QueuedAppend[] = [];
  const held = new Set<string>();
  let bytes = 0;
  for (const entry of queue) {
    const key = appendThreadKey(entry);
    const fits = batch.length === 0 || (batch.length < maxBatchSize && bytes + entry.item.byteSize <= maxBatchBytes);
    if (
      entry.tenantId === head.tenantId &&
      entry.appRole === head.appRole &&
      !busyThreads.has(key) &&
      !held.has(key) &&
      fits
    ) {
      batch.push(entry);
      bytes += entry.item.byteSize;
    } else {
      held.add(key);
      rest.push(entry);
    }
  }
  return { batch, rest };
}
