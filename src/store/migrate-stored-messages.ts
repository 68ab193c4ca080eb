import { and, asc, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { assertInteger, assertUuid } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { CURRENT_MESSAGE_SCHEMA_VERSION, migrateMessageParts } from '../model/message-shape-migrations.js';
import { inTenant, type StoreContext } from './store-context.js';

/** Where {@link migrateStoredMessages} stopped: the last row of the batch, by (thread, sequence). */
export interface MessageMigrationCursor {
  /** The thread of the last row looked at. */
  threadId: string;
  /** Its sequence. */
  sequence: number;
}

/** Options of `migrateStoredMessages`. */
export interface MigrateStoredMessagesOptions {
  /**
   * How many rows one call locks and rewrites, in one short transaction.
   * @default 500
   */
  batchSize?: number;
  /** The cursor a previous call returned as `next`: the batch starts after it. Omit (or null) to start. */
  after?: MessageMigrationCursor | null;
}

/** What one call of `migrateStoredMessages` did. */
export interface MessageMigrationBatch {
  /** Rows whose parts were rewritten (`content_version` raised by one, token count cleared). */
  rewritten: number;
  /** Rows already in today's shape whose `schema_version` was only raised. */
  marked: number;
  /** Rows of an older version left as they are (redacted, or still pending or streaming); reads migrate them. */
  skipped: number;
  /** Pass it as `after` to continue; null when the tenant has no older row after this batch. */
  next: MessageMigrationCursor | null;
}

/**
 * Brings one batch of the tenant's messages stored with an older message-shape version up to
 * `CURRENT_MESSAGE_SCHEMA_VERSION`, in place, with the same migrations reads apply. Rows are taken in (thread,
 * sequence) order after `after` and locked for the batch's short transaction, so an append, a checkpoint or a
 * redaction running at the same time waits for it or is waited for, never lost. A row whose parts change gets
 * them rewritten, `content_version` + 1, its byte size recomputed and its token count cleared (recounted on
 * use); a row already in today's shape only gets its `schema_version` raised. Redacted rows, and pending or
 * streaming ones (their writer owns the parts), are left untouched. Idempotent: a second pass changes nothing.
 */
export async function migrateStoredMessages(
  context: StoreContext,
  { batchSize = 500, after = null }: MigrateStoredMessagesOptions = {},
): Promise<MessageMigrationBatch> {
  const limit = assertInteger('options.batchSize', batchSize, 1, 10_000);
  const cursor = after === null || after === undefined ? null : assertCursor(after);
  const { agentMessage: m } = context.tables;
  return inTenant(context, async (tx) => {
    const rows = await tx
      .select({
        id: m.id,
        threadId: m.threadId,
        sequence: m.sequence,
        parts: m.parts,
        metadata: m.metadata,
        schemaVersion: m.schemaVersion,
        status: m.status,
        redactedAt: m.redactedAt,
      })
      .from(m)
      .where(
        and(
          eq(m.tenantId, context.tenantId),
          lt(m.schemaVersion, CURRENT_MESSAGE_SCHEMA_VERSION),
          cursor
            ? or(gt(m.threadId, cursor.threadId), and(eq(m.threadId, cursor.threadId), gt(m.sequence, cursor.sequence)))
            : undefined,
        ),
      )
      .orderBy(asc(m.threadId), asc(m.sequence))
      .limit(limit)
      .for('update');
    const batch: MessageMigrationBatch = { rewritten: 0, marked: 0, skipped: 0, next: null };
    const unchanged: string[] = [];
    for (const row of rows) {
      if (row.redactedAt !== null || row.status === 'pending' || row.status === 'streaming') {
        batch.skipped += 1;
        continue;
      }
      const shaped = Array.isArray(row.parts) ? migrateMessageParts(row.parts, row.schemaVersion) : null;
      if (!shaped || shaped.migrations.length === 0) {
        unchanged.push(row.id);
        continue;
      }
      const byteSize =
        Buffer.byteLength(JSON.stringify(shaped.parts)) + Buffer.byteLength(JSON.stringify(row.metadata));
      await tx
        .update(m)
        .set({
          parts: shaped.parts as never,
          schemaVersion: CURRENT_MESSAGE_SCHEMA_VERSION,
          contentVersion: sql`${m.contentVersion} + 1`,
          byteSize,
          tokenCount: null,
          tokenCounterId: null,
          partTokenCounts: null,
          updatedAt: sql`now()`,
        })
        .where(and(eq(m.tenantId, context.tenantId), eq(m.id, row.id), isNull(m.redactedAt)));
      batch.rewritten += 1;
    }
    if (unchanged.length > 0) {
      await tx
        .update(m)
        .set({ schemaVersion: CURRENT_MESSAGE_SCHEMA_VERSION })
        .where(and(eq(m.tenantId, context.tenantId), inArray(m.id, unchanged)));
      batch.marked = unchanged.length;
    }
    const last = rows.at(-1);
    if (last && rows.length === limit) batch.next = { threadId: last.threadId, sequence: Number(last.sequence) };
    return batch;
  });
}

function assertCursor(after: unknown): MessageMigrationCursor {
  if (typeof after !== 'object' || after === null || Array.isArray(after)) {
    throw new InvalidArgumentError({
      argument: 'options.after',
      value: after,
      message: 'expected the cursor a previous call returned ({ threadId, sequence }).',
    });
  }
  const { threadId, sequence } = after as Record<string, unknown>;
  return {
    threadId: assertUuid('options.after.threadId', threadId),
    sequence: assertInteger('options.after.sequence', sequence, 0, Number.MAX_SAFE_INTEGER),
  };
}
