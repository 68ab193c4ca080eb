import { context, trace } from '@opentelemetry/api';
import { is } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { assertInteger } from '../errors/assert-input.js';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import type { AppendItem, AppendStatements } from './append-statements.js';
import type { AppendBatcher } from './store-context-parts.js';
import { nextTurn } from '../tokens/piece-counter.js';
import { embeddedClient } from './execute-append.js';
import { sendAppendBatch, type SendAppendBatchOptions } from './send-append-batch.js';
import { appendThreadKey, takeAppendBatch, type QueuedAppend } from './take-append-batch.js';

/**
 * Write combining for appends. Up to `maxInFlight` append statements run at once per store, and at most one per
 * thread; appends that arrive while their thread or every slot is busy wait in a queue, and the next free slot
 * sends every queued append of one tenant whose thread is free (up to `maxBatchSize` messages and
 * `maxBatchBytes`) as one statement with one commit. A statement leaves at the end of the event loop's turn, so
 * the appends made in one turn (a burst, or the callers a statement just answered appending again) go together:
 * a lone append waits for nothing else. (Only a slot given up by a stalled statement is used at once.) Under load
 * this turns N commits (N WAL flushes, N round trips, N waits on a hot thread's row lock) into one.
 */
export interface AppendBatchingOptions {
  /**
   * Append statements in flight at once (each holds one connection). On PGlite, which runs one statement at a time,
   * a second one in flight would only wait inside PGlite while taking appends out of the next batch. @default 2 (1 on PGlite)
   */
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

const setting = (argument: string, value: unknown, fallback: number, max: number): number =>
  value === undefined ? fallback : assertInteger(argument, value, 1, max);

/** The options, checked (an {@link InvalidArgumentError} naming the bad one), with their defaults for `db`. */
function batchingSettings(
  options: AppendBatchingOptions | undefined,
  db: AgentHistoryDatabase,
): Required<AppendBatchingOptions> {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new InvalidArgumentError({
      argument: 'appendBatching',
      value: options,
      message: 'expected false or { maxInFlight?, maxBatchSize?, maxBatchBytes?, stalledAfterMs? }.',
    });
  }
  return {
    maxInFlight: setting(
      'appendBatching.maxInFlight',
      options?.maxInFlight,
      embeddedClient(db) === null ? 2 : 1,
      1_000,
    ),
    maxBatchSize: setting('appendBatching.maxBatchSize', options?.maxBatchSize, 64, 10_000),
    maxBatchBytes: setting('appendBatching.maxBatchBytes', options?.maxBatchBytes, 4_194_304, 1_073_741_824),
    stalledAfterMs: setting('appendBatching.stalledAfterMs', options?.stalledAfterMs, 250, 3_600_000),
  };
}

/** Tells each caller's span (its store method's, when traced) how many appends its statement combined. */
function tellBatchSize(batch: QueuedAppend[]): void {
  for (const entry of batch) {
    const span = trace.getSpan(entry.context);
    if (span?.isRecording()) span.setAttribute('agent_history.append.batch_size', batch.length);
  }
}

/**
 * Validates the options; `false` turns batching off (every append is its own statement), and so does a `db` that
 * is a transaction (a failed batch would abort it, and the one-by-one resend with it).
 */
export function createAppendBatcher(
  db: AgentHistoryDatabase,
  statements: AppendStatements,
  options: AppendBatchingOptions | false | undefined,
  { onBatchError }: { onBatchError?: (error: unknown, size: number) => void } = {},
): AppendBatcher | null {
  if (options === false || is(db, PgTransaction)) return null;
  const { maxInFlight, maxBatchSize, maxBatchBytes, stalledAfterMs } = batchingSettings(options, db);

  let inFlight = 0;
  /** Statements that gave up their slot (see stalledAfterMs); at most maxInFlight, so at most 2 × maxInFlight in all. */
  let stalledCount = 0;
  let queue: QueuedAppend[] = [];
  /** Threads with a statement in flight, by `tenant/thread`: their queued appends wait for it. */
  const busyThreads = new Set<string>();
  const sendOptions: SendAppendBatchOptions = { db, statements, onBatchError };

  const pump = () => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const { batch, rest } = takeAppendBatch(queue, { busyThreads, maxBatchSize, maxBatchBytes });
      queue = rest;
      if (batch.length === 0) return; // every queued append waits for its thread's statement in flight
      // One statement per thread at most, so a batch's threads were all free: no count is needed.
      const keys = new Set(batch.map(appendThreadKey));
      tellBatchSize(batch);
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
      void sendAppendBatch(batch, sendOptions)
        // sendAppendBatch settles every entry itself; this only keeps an unexpected throw from leaving callers waiting.
        .catch((error: unknown) => batch.forEach((entry) => entry.reject(error)))
        .finally(() => {
          clearTimeout(stalled);
          if (gaveUpSlot) stalledCount--;
          // The callers just answered may append again at once (a writer's loop): the slot, and their threads,
          // stay busy to the end of this turn, so that those appends join the ones queued meanwhile in one
          // statement instead of the first going alone (which made a hot thread's statements alternate between
          // one append and all the others, and 50 threads' appenders send a third of their appends alone).
          void nextTurn().then(() => {
            if (!gaveUpSlot) inFlight--;
            for (const key of keys) busyThreads.delete(key);
            pump();
          });
        });
    }
  };

  /** Whether a pump waits for the end of this turn; the appends made until then go in its statements. */
  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    void nextTurn().then(() => {
      scheduled = false;
      pump();
    });
  };

  const submit = <ROW>(tenantId: string, appRole: string | null, item: AppendItem) =>
    new Promise<ROW[]>((resolve, reject) => {
      const entry = { tenantId, appRole, item, reject, context: context.active() };
      queue.push({ ...entry, resolve: resolve as (rows: unknown[]) => void });
      schedule();
    });
  return { submit };
}
