import { and, asc, eq, inArray, lt } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { recordAudit } from './audit.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertInteger } from '../errors/assert-input.js';

/** The options of `deleteThreadsOlderThan`. */
export interface RetentionOptions {
  /** Threads whose newest activity is older than this are deleted whole. */
  olderThan: Date;
  /** Threads per transaction. @default 100 (1 to 10,000) */
  batchSize?: number;
}

/**
 * Deletes, in batches of whole threads, every thread of the tenant (soft-deleted ones included) whose last
 * activity is older than the cut-off, with its runs, messages, summaries and snapshots. A newer thread is never
 * touched, and a thread is never cut in part. Returns how many threads were deleted.
 */
export async function deleteThreadsOlderThan(
  context: StoreContext,
  { olderThan, batchSize = 100 }: RetentionOptions,
): Promise<number> {
  if (!(olderThan instanceof Date) || Number.isNaN(olderThan.getTime())) {
    throw new InvalidArgumentError({
      argument: 'options.olderThan',
      value: olderThan,
      message: 'expected a valid Date.',
    });
  }
  assertInteger('options.batchSize', batchSize, 1, 10_000);
  const { agentThread } = context.tables;
  let deleted = 0;
  for (;;) {
    const batch = await inTenant(context, async (tx) => {
      const ids = await tx
        .select({ id: agentThread.id })
        .from(agentThread)
        .where(and(eq(agentThread.tenantId, context.tenantId), lt(agentThread.lastMessageAt, olderThan)))
        .orderBy(asc(agentThread.lastMessageAt))
        .limit(batchSize)
        .for('update', { skipLocked: true });
      if (ids.length === 0) return 0;
      await tx.delete(agentThread).where(
        and(
          eq(agentThread.tenantId, context.tenantId),
          inArray(
            agentThread.id,
            ids.map((row) => row.id),
          ),
        ),
      );
      await recordAudit(context, tx, {
        action: 'threads-expired',
        actor: 'retention',
        details: { threadIds: ids.map((row) => row.id), olderThan: olderThan.toISOString() },
      });
      return ids.length;
    });
    deleted += batch;
    if (batch < batchSize) return deleted;
  }
}
