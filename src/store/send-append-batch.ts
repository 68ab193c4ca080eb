import { context } from '@opentelemetry/api';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import { executeAppend } from './execute-append.js';
import type { AppendStatements } from './append-statements.js';
import { postgresErrorCode } from './store-context.js';
import type { QueuedAppend } from './take-append-batch.js';

/** SQLSTATEs an item of a batch can cause: the batch is resent one append at a time, so only that item fails. */
const ITEM_CAUSED = /^(22|23)|^40P01$|^40001$/;

/** Where and how {@link sendAppendBatch} sends, and whom it tells about a failed batch. */
export interface SendAppendBatchOptions {
  /** The database the statements run on. */
  db: AgentHistoryDatabase;
  /** The append statements, in the tables' schema. */
  statements: AppendStatements;
  /** Test hook: called with the error of a failed batch statement and its size. */
  onBatchError?: (error: unknown, size: number) => void;
}

/**
 * Sends a batch of one tenant's appends as one statement (one alone as the single-append statement) and settles
 * every caller: with its own rows, or with the error it would have had alone. Never throws. A statement runs in the
 * async context of its first caller; an append resent alone, in its own caller's.
 */
export async function sendAppendBatch(batch: QueuedAppend[], options: SendAppendBatchOptions): Promise<void> {
  return context.with(batch[0]!.context, () => sendBatch(batch, options));
}

async function sendBatch(batch: QueuedAppend[], options: SendAppendBatchOptions): Promise<void> {
  const { db, statements, onBatchError } = options;
  if (batch.length === 1) return sendAlone(batch[0]!, options);
  const { tenantId, appRole } = batch[0]!;
  let rows: Array<{ item: number }>;
  try {
    rows = await executeAppend(
      db,
      statements.batch(
        tenantId,
        appRole,
        batch.map((entry) => entry.item),
      ),
      { tables: statements.tables, messages: batch.length },
    );
  } catch (error) {
    try {
      onBatchError?.(error, batch.length);
    } catch {
      // a test hook must not leave the batch's callers waiting
    }
    const code = postgresErrorCode(error) ?? '';
    const threads = Map.groupBy(batch, (entry) => entry.item.threadId);
    if (code === '55P03' && threads.size > 1) {
      // Another writer holds one of the threads (the batch does not wait while holding the others): one batch
      // per thread, each waiting for its own thread only.
      await Promise.all([...threads.values()].map((thread) => sendAppendBatch(thread, options)));
    } else if (ITEM_CAUSED.test(code)) {
      // The whole batch rolled back (a racing duplicate, a missing run, …): send each append alone, in order,
      // so each caller gets exactly the outcome it would have had without batching.
      for (const entry of batch) await sendAlone(entry, options);
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
    for (const entry of batch) await sendAlone(entry, options);
    return;
  }
  const byItem: unknown[][] = batch.map(() => []);
  for (const { item, ...row } of rows) byItem[item]!.push(row);
  batch.forEach((entry, index) => entry.resolve(byItem[index]!));
}

async function sendAlone(entry: QueuedAppend, options: SendAppendBatchOptions): Promise<void> {
  return context.with(entry.context, () => sendOne(entry, options));
}

async function sendOne(entry: QueuedAppend, { db, statements }: SendAppendBatchOptions): Promise<void> {
  try {
    entry.resolve(
      await executeAppend(db, statements.single(entry.tenantId, entry.appRole, entry.item), {
        tables: statements.tables,
        messages: 1,
      }),
    );
  } catch (error) {
    entry.reject(error);
  }
}
