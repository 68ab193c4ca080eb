import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { StoredMessage } from '../model/stored-rows.js';
import { rowsOf } from '../tenant/database.js';
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
 * or after the last one). Returns the recovered messages.
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
    const runIds = [...new Set(rows.flatMap((row) => (row.runId ? [row.runId] : [])))];
    // The database's clock (the rows' timestamps come from it), read once and passed as an untyped parameter
    // that Postgres reads as a timestamptz: Citus refuses a non-immutable function (now(), a text-to-timestamptz
    // cast) inside COALESCE or GREATEST.
    const [row] = rowsOf<{ now: Date | string }>(await tx.execute(sql`select now() as now`));
    const now = new Date(row!.now);
    const cutoff = new Date(now.getTime() - context.leaseMs);
    await tx
      .update(agentRun)
      .set({
        status: 'failed',
        error: ABANDONED_RUN_ERROR,
        finishedAt: sql`greatest(${now.toISOString()}, ${agentRun.startedAt})`,
        updatedAt: sql`now()`,
      })
      .where(
        and(
          eq(agentRun.tenantId, context.tenantId),
          eq(agentRun.status, 'running'),
          sql`not exists (select 1 from ${agentMessage} where ${agentMessage.tenantId} = ${agentRun.tenantId}
                and ${agentMessage.runId} = ${agentRun.id} and ${agentMessage.status} in ('pending', 'streaming'))`,
          sql`(${agentRun.id} in (${sql.join(
            (runIds.length ? runIds : ['00000000-0000-0000-0000-000000000000']).map((id) => sql`${id}::uuid`),
            sql`, `,
          )})
            or coalesce((select max(${agentMessage.updatedAt}) from ${agentMessage}
                 where ${agentMessage.tenantId} = ${agentRun.tenantId} and ${agentMessage.runId} = ${agentRun.id}),
               ${agentRun.startedAt}) < ${cutoff.toISOString()})`,
        ),
      );
    return rows.map((row) => toStoredMessage(row)).sort((a, b) => a.sequence - b.sequence);
  });
}
