import { and, eq, inArray, lt, notInArray, sql } from 'drizzle-orm';
import type { StoredMessage } from '../model/stored-rows.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { inTenant, type StoreContext } from './store-context.js';

/** The error a run ended by recovery records. */
const ABANDONED_RUN_ERROR = {
  name: 'AbandonedRun',
  message: 'The run was still running when its writer stopped (no live message for the lease); ended by recovery.',
};

/**
 * Marks as `failed` every pending or streaming message of the tenant whose lease has expired (its writer died),
 * keeping the parts it had checkpointed, and ends as `failed` the runs that died with them: the runs of those
 * messages, and every other `running` run with no pending or streaming message whose last message (or, without
 * one, its start) is older than the lease by the database's clock (a writer that crashed between its messages,
 * or after the last one). Deletes the chunk logs of the recovered answers and of answers that ended longer than the
 * lease ago. Returns the recovered messages.
 */
export function recoverAbandonedMessages(context: StoreContext): Promise<StoredMessage[]> {
  const { agentMessage, agentRun } = context.tables;
  return inTenant(context, async (tx) => {
    const rows = await tx
      .update(agentMessage)
      .set({
        status: 'failed',
        leaseExpiresAt: null,
        completedAt: sql`now()`,
        updatedAt: sql`now()`,
        metadata: sql`${agentMessage.metadata} || '{"agentHistory":{"failure":"lease-expired"}}'::jsonb`,
      })
      .where(
        and(
          eq(agentMessage.tenantId, context.tenantId),
          inArray(agentMessage.status, ['pending', 'streaming']),
          lt(agentMessage.leaseExpiresAt, context.now()),
        ),
      )
      .returning(messageColumns(context.tables));
    const ended = await abandonedRuns(context, tx, new Set(rows.flatMap((row) => (row.runId ? [row.runId] : []))));
    if (ended.length > 0) {
      await tx
        .update(agentRun)
        .set({
          status: 'failed',
          error: ABANDONED_RUN_ERROR,
          finishedAt: sql`greatest(now(), ${agentRun.startedAt})`,
          updatedAt: sql`now()`,
        })
        .where(
          and(eq(agentRun.tenantId, context.tenantId), inArray(agentRun.id, ended), eq(agentRun.status, 'running')),
        );
    }
    await deleteEndedChunkLogs(
      context,
      tx,
      rows.map((row) => row.id),
    );
    return rows.map((row) => toStoredMessage(row)).sort((a, b) => a.sequence - b.sequence);
  });
}

/**
 * Deletes the chunk logs of the answers just recovered, and of every answer that ended longer than the lease ago: a
 * log is deleted shortly after its answer ends by the process that wrote it, and this is the clean-up that does not
 * depend on that process being alive. Single-tenant statements, so each routes to one shard group on Citus.
 */
async function deleteEndedChunkLogs(context: StoreContext, tx: TenantTransaction, recovered: string[]): Promise<void> {
  const { agentStreamChunk, agentMessage } = context.tables;
  const logged = await tx
    .selectDistinct({ messageId: agentStreamChunk.messageId })
    .from(agentStreamChunk)
    .where(eq(agentStreamChunk.tenantId, context.tenantId));
  if (logged.length === 0) return;
  const ended = await tx
    .select({ id: agentMessage.id })
    .from(agentMessage)
    .where(
      and(
        eq(agentMessage.tenantId, context.tenantId),
        inArray(
          agentMessage.id,
          logged.map((row) => row.messageId),
        ),
        notInArray(agentMessage.status, ['pending', 'streaming']),
        // By the database's clock, which wrote `completed_at`.
        lt(agentMessage.completedAt, sql`now() - make_interval(secs => ${context.leaseMs / 1000})`),
      ),
    );
  const stale = [...new Set([...recovered, ...ended.map((row) => row.id)])];
  if (stale.length === 0) return;
  await tx
    .delete(agentStreamChunk)
    .where(and(eq(agentStreamChunk.tenantId, context.tenantId), inArray(agentStreamChunk.messageId, stale)));
}

/**
 * The tenant's `running` runs that died: those of the messages just recovered, and those with no pending or
 * streaming message whose last message (or, without one, its start) is older than the lease by the database's
 * clock. Read with two single-tenant statements and decided here, so that every statement routes to one shard
 * group on Citus (which refuses the correlated form). The runs are locked until the transaction ends.
 */
async function abandonedRuns(context: StoreContext, tx: TenantTransaction, recovered: Set<string>): Promise<string[]> {
  const { agentRun, agentMessage } = context.tables;
  const running = await tx
    .select({ id: agentRun.id, startedAt: agentRun.startedAt, now: sql<Date | string>`now()` })
    .from(agentRun)
    .where(and(eq(agentRun.tenantId, context.tenantId), eq(agentRun.status, 'running')))
    .for('update');
  if (running.length === 0) return [];
  const activity = await tx
    .select({
      runId: agentMessage.runId,
      lastUpdate: sql<Date | string>`max(${agentMessage.updatedAt})`,
      live: sql<boolean>`bool_or(${agentMessage.status} in ('pending', 'streaming'))`,
    })
    .from(agentMessage)
    .where(
      and(
        eq(agentMessage.tenantId, context.tenantId),
        inArray(
          agentMessage.runId,
          running.map((run) => run.id),
        ),
      ),
    )
    .groupBy(agentMessage.runId);
  const byRun = new Map(activity.map((entry) => [entry.runId, entry]));
  const cutoff = new Date(running[0]!.now).getTime() - context.leaseMs;
  return running
    .filter((run) => {
      const messages = byRun.get(run.id);
      if (messages?.live) return false;
      if (recovered.has(run.id)) return true;
      return new Date(messages?.lastUpdate ?? run.startedAt).getTime() < cutoff;
    })
    .map((run) => run.id);
}
