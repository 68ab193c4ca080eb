import { is } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { assertInteger } from './assert-input.js';
import { rowsOf, type AgentHistoryDatabase } from '../tenant/database.js';
import { postgresErrorCode } from './store-context.js';
import type { AppendItem, AppendStatements } from './append-statements.js';

/**
 * Write combining for appends. Up to `maxInFlight` append statements run at once per store, and at most one per
 * thread; appends that arrive while their thread or every slot is busy wait in a queue, and the next free slot
 * sends every queued append of one tenant whose thread is free (up to `maxBatchSize` messages and
 * `maxBatchBytes`) as one statement with one commit. A lone append is sent at once, exactly as without batching.
 * Under load this turns N commits (N WAL flushes, N round trips, N waits on a hot thread's row lock) into one.
 */
export interface AppendBatchingOptions {
  /** Append statements in flight at once (each holds one connection). @default 2 */
  maxInFlight?: number;
  /** The most messages in one statement. @default 64 */
  maxBatchSize?: number;
  /** The most serialized message bytes in one statement (a single larger message is still sent alone). @default 4_194_304 */
  maxBatchBytes?: number;
  /**
   * A statement not answered after this many milliseconds (typically waiting on a thread another writer holds)
   * stops counting against `maxInFlight`, so appends to other threads do not wait behind it. Its own thread stays
   * busy until it answers. At most `maxInFlight` statements give up their slot at once, so a store never has more
   * than 2 × `maxInFlight` append statements (and pooled connections) in flight. @default 250
   */
  stalledAfterMs?: number;
}

interface Queued<ROW> {
  tenantId: string;
  appRole: string | null;
  item: AppendItem;
  resolve(rows: ROW[]): void;
  reject(error: unknown): void;
}

/** Combines concurrent appends into one statement per batch (see `appendBatching`). Internal. */
export interface AppendBatcher {
  /** The rows `agent_history_append_message` returns for this item, whether it was sent alone or in a batch. */
  submit<ROW>(tenantId: string, appRole: string | null, item: AppendItem): Promise<ROW[]>;
}

const setting = (argument: string, value: unknown, fallback: number, max: number): number =>
  value === undefined ? fallback : assertInteger(argument, value, 1, max);

/** How long appends go alone after the batch function was found missing or not granted. */
const BATCH_RETRY_AFTER_MS = 60_000;

/** SQLSTATEs an item of a batch can cause: the batch is resent one append at a time, so only that item fails. */
const ITEM_CAUSED = /^(22|23)|^40P01$|^40001$/;

/**
 * Validates the options; `false` turns batching off (every append is its own statement), and so does a `db` that
 * is a transaction (a failed batch would abort it, and the one-by-one resend with it).
 */
export function createAppendBatcher(
  db: AgentHistoryDatabase,
  statements: AppendStatements,
  options: AppendBatchingOptions | false | undefined,
  {
    onBatchError,
    now = () => new Date(),
  }: { onBatchError?: (error: unknown, size: number) => void; now?: () => Date } = {},
): AppendBatcher | null {
  if (options === false || is(db, PgTransaction)) return null;
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new InvalidArgumentError({
      argument: 'appendBatching',
      value: options,
      message: 'expected false or { maxInFlight?, maxBatchSize?, maxBatchBytes?, stalledAfterMs? }.',
    });
  }
  const maxInFlight = setting('appendBatching.maxInFlight', options?.maxInFlight, 2, 1_000);
  const maxBatchSize = setting('appendBatching.maxBatchSize', options?.maxBatchSize, 64, 10_000);
  const maxBatchBytes = setting('appendBatching.maxBatchBytes', options?.maxBatchBytes, 4_194_304, 1_073_741_824);
  const stalledAfterMs = setting('appendBatching.stalledAfterMs', options?.stalledAfterMs, 250, 3_600_000);

  let inFlight = 0;
  /** Statements that gave up their slot (see stalledAfterMs); at most maxInFlight, so at most 2 × maxInFlight in all. */
  let stalledCount = 0;
  let queue: Queued<unknown>[] = [];
  /** Threads with a statement in flight, by `tenant/thread`: their queued appends wait for it. */
  const busyThreads = new Set<string>();
  const threadKey = (entry: Queued<unknown>) => `${entry.tenantId}/${entry.item.threadId}`;
  /**
   * Until when every append goes alone: set for a minute when the batch function is missing or not granted (a
   * schema migrated without 0004), then a batch is tried again (the migration may have been applied since).
   */
  let batchUnavailableUntil = 0;

  /**
   * Takes the oldest queued append whose thread has no statement in flight, and every later one of its tenant
   * that fits, keeping their order. A thread's appends never overtake each other: once one stays behind, every
   * later one of that thread does too.
   */
  const takeBatch = (): Queued<unknown>[] => {
    const head = queue.find((entry) => !busyThreads.has(threadKey(entry)));
    if (!head) return [];
    if (now().getTime() < batchUnavailableUntil) {
      queue = queue.filter((entry) => entry !== head);
      return [head];
    }
    const batch: Queued<unknown>[] = [];
    const rest: Queued<unknown>[] = [];
    const held = new Set<string>();
    let bytes = 0;
    for (const entry of queue) {
      const key = threadKey(entry);
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
    queue = rest;
    return batch;
  };

  const runAlone = async (entry: Queued<unknown>) => {
    try {
      entry.resolve(rowsOf(await db.execute(statements.single(entry.tenantId, entry.appRole, entry.item))));
    } catch (error) {
      entry.reject(error);
    }
  };

  const runBatch = async (batch: Queued<unknown>[]): Promise<void> => {
    if (batch.length === 1) return runAlone(batch[0]!);
    const { tenantId, appRole } = batch[0]!;
    let rows: Array<{ item: number }>;
    try {
      rows = rowsOf(
        await db.execute(
          statements.batch(
            tenantId,
            appRole,
            batch.map((entry) => entry.item),
          ),
        ),
      );
    } catch (error) {
      try {
        onBatchError?.(error, batch.length);
      } catch {
        // a test hook must not leave the batch's callers waiting
      }
      const code = postgresErrorCode(error) ?? '';
      const threads = Map.groupBy(batch, (entry) => entry.item.threadId);
      const noBatchFunction = code === '42883' || code === '42501'; // missing, or not granted
      if (noBatchFunction) batchUnavailableUntil = now().getTime() + BATCH_RETRY_AFTER_MS;
      if (code === '55P03' && threads.size > 1) {
        // Another writer holds one of the threads (the batch does not wait while holding the others): one batch
        // per thread, each waiting for its own thread only.
        await Promise.all([...threads.values()].map(runBatch));
      } else if (noBatchFunction || ITEM_CAUSED.test(code)) {
        // The whole batch rolled back (a racing duplicate, a missing run, …): send each append alone, in order,
        // so each caller gets exactly the outcome it would have had without batching.
        for (const entry of batch) await runAlone(entry);
      } else {
        // Not caused by an item (a lost connection, a timeout, a server shutting down): every caller gets the
        // error, as a lone append in flight at that moment would have.
        for (const entry of batch) entry.reject(error);
      }
      return;
    }
    const wellFormed = (row: { item: number } | undefined) =>
      typeof row === 'object' && row !== null && Number.isInteger(row.item) && row.item >= 0 && row.item < batch.length;
    // Every index is looked at: `every` alone would skip a hole. (An item has no row when its thread is missing.)
    if (!Array.from(rows).every(wellFormed)) {
      // A malformed answer (a driver's fault; see rowsOf): ask again, one by one.
      // Each append is idempotent, so one that the batch did commit gets its stored row back.
      for (const entry of batch) await runAlone(entry);
      return;
    }
    const byItem: unknown[][] = batch.map(() => []);
    for (const { item, ...row } of rows) byItem[item]!.push(row);
    batch.forEach((entry, index) => entry.resolve(byItem[index]!));
  };

  const pump = () => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = takeBatch();
      if (batch.length === 0) return; // every queued append waits for its thread's statement in flight
      // One statement per thread at most, so a batch's threads were all free: no count is needed.
      const keys = new Set(batch.map(threadKey));
      for (const key of keys) busyThreads.add(key);
      inFlight++;
      let gaveUpSlot = false;
      // A statement that waits long (on a lock another writer holds) gives its slot to the other threads' appends,
      // as long as no more than maxInFlight statements have done so (each still holds a pooled connection).
      const stalled = setTimeout(() => {
        if (stalledCount >= maxInFlight) return;
        gaveUpSlot = true;
        stalledCount++;
        inFlight--;
        pump();
      }, stalledAfterMs);
      (stalled as { unref?: () => void }).unref?.(); // a number, without unref, outside Node
      void runBatch(batch)
        // runBatch settles every entry itself; this only keeps an unexpected throw from leaving callers waiting.
        .catch((error: unknown) => batch.forEach((entry) => entry.reject(error)))
        .finally(() => {
          clearTimeout(stalled);
          for (const key of keys) busyThreads.delete(key);
          if (gaveUpSlot) stalledCount--;
          else inFlight--;
          pump();
        });
    }
  };

  return {
    submit<ROW>(tenantId: string, appRole: string | null, item: AppendItem): Promise<ROW[]> {
      return new Promise<ROW[]>((resolve, reject) => {
        queue.push({ tenantId, appRole, item, resolve: resolve as (rows: unknown[]) => void, reject });
        pump();
      });
    },
  };
}
