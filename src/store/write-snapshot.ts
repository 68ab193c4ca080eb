import { and, desc, eq, sql } from 'drizzle-orm';
import { AgentHistoryError } from '../errors/agent-history-error.js';
import { assertInteger, assertOptionalUuid, assertRequiredText, assertThreadId } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { SnapshotBoundaryError } from '../errors/snapshot-boundary-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import type { NewSnapshot } from '../model/context-store.js';
import type { StoredSnapshot } from '../model/stored-rows.js';
import { rowsOf } from '../tenant/database.js';
import { snapshotColumns, toSnapshot } from './context-artifact-rows.js';
import { requireThread } from './require-thread.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { inTenant, postgresErrorCode, type StoreContext } from './store-context.js';
import { assertStorableJson } from './validate-message.js';
import { ofThread } from './of-thread.js';
import { callInOneStatement, fromColumnNames, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';

/** The JSON text of a value `jsonb` accepts (no cycles, NUL, lone surrogates, non-finite numbers), or InvalidArgumentError. */
function jsonArgument(argument: string, value: unknown): string {
  try {
    assertStorableJson(value, argument);
  } catch (error) {
    if (!AgentHistoryError.isInstance(error)) throw error;
    throw new InvalidArgumentError({ argument, value: (error as { value?: unknown }).value, message: error.message });
  }
  return JSON.stringify(value);
}

// Why the insert wrote nothing: a newer version (checked first: the writer must reload anyway), or a boundary
// below the previous snapshot's, read in the same transaction as the refused statement.
async function refusal(
  context: StoreContext,
  tx: TenantTransaction,
  thread: string,
  expectedVersion: number,
  throughSequence: number,
): Promise<Error> {
  const { agentContextSnapshot } = context.tables;
  const [current] = await tx
    .select({ version: sql<number>`coalesce(max(${agentContextSnapshot.version}), 0)` })
    .from(agentContextSnapshot)
    .where(ofThread(context, agentContextSnapshot, thread));
  const actualVersion = Number(current?.version);
  if (actualVersion !== expectedVersion)
    return new VersionConflictError({ entity: 'snapshot', expectedVersion, actualVersion });
  const [previous] = await tx
    .select({ version: agentContextSnapshot.version, throughSequence: agentContextSnapshot.throughSequence })
    .from(agentContextSnapshot)
    .where(and(ofThread(context, agentContextSnapshot, thread), eq(agentContextSnapshot.stale, false)))
    .orderBy(desc(agentContextSnapshot.version))
    .limit(1);
  return new SnapshotBoundaryError({
    throughSequence,
    previousThroughSequence: Number(previous?.throughSequence ?? 0),
    previousVersion: Number(previous?.version ?? 0),
  });
}

/**
 * The snapshot written in one statement (`agent_history_write_snapshot`), or null when the transaction path must
 * write it or tell why it was refused (the refusals it checks only become more certain with time).
 */
async function writeInOneStatement(
  context: StoreContext,
  thread: string,
  input: NewSnapshot,
  checked: {
    expectedVersion: number;
    summaryId: string | null;
    pruned: string;
    budget: string;
    policyVersion: string;
    messagesHash: string;
    stepNumber: number | null;
  },
): Promise<StoredSnapshot | null> {
  if (!Number.isSafeInteger(input.throughSequence)) return null;
  await context.checkRowLevelSecurity();
  const rows = await callInOneStatement<Record<string, unknown>>(context, 'agent_history_write_snapshot', [
    { uuid: thread },
    { integer: checked.expectedVersion },
    { bigint: input.throughSequence },
    { uuid: checked.summaryId },
    { jsonb: JSON.stringify(input.includedSequences) },
    { jsonb: checked.pruned },
    { jsonb: checked.budget },
    { text: checked.policyVersion },
    { text: checked.messagesHash },
    { integer: checked.stepNumber },
  ]);
  if (rows === IN_TRANSACTION || rows === THREAD_MISSING || rows.length === 0) return null;
  return toSnapshot(fromColumnNames(snapshotColumns(context), rows[0]!));
}

/**
 * Writes snapshot `expectedVersion + 1`. When another writer got there first, nothing is written and a
 * {@link VersionConflictError} is raised: a snapshot is never overwritten. The boundary is inclusive, must
 * lie within the thread and may not go back below the previous (not stale) snapshot's: checked in the same
 * statement as the version, so two concurrent writers cannot slip past it ({@link SnapshotBoundaryError}).
 */
export async function writeSnapshot(
  context: StoreContext,
  threadId: string,
  input: NewSnapshot,
): Promise<StoredSnapshot> {
  const thread = assertThreadId(threadId);
  const expectedVersion = assertInteger('snapshot.expectedVersion', input.expectedVersion, 0, 2_000_000_000);
  if (
    !Array.isArray(input.includedSequences) ||
    input.includedSequences.some((sequence) => !Number.isSafeInteger(sequence) || sequence < 1)
  ) {
    throw new InvalidArgumentError({
      argument: 'snapshot.includedSequences',
      value: input.includedSequences,
      message: 'expected positive integers.',
    });
  }
  const policyVersion = assertRequiredText('snapshot.policyVersion', input.policyVersion);
  const messagesHash = assertRequiredText('snapshot.messagesHash', input.messagesHash);
  const summaryId = assertOptionalUuid('snapshot.summaryId', input.summaryId);
  const pruned = jsonArgument('snapshot.pruned', input.pruned ?? []);
  const budget = jsonArgument('snapshot.budget', input.budget ?? {});
  const stepNumber =
    input.stepNumber == null ? null : assertInteger('snapshot.stepNumber', input.stepNumber, 0, 2_000_000_000);
  const { agentContextSnapshot, agentSummary } = context.tables;
  try {
    const written = await writeInOneStatement(context, thread, input, {
      expectedVersion,
      summaryId,
      pruned,
      budget,
      policyVersion,
      messagesHash,
      stepNumber,
    });
    if (written) return written;
    return await inTenant(context, async (tx) => {
      const threadRow = await requireThread(context, tx, thread);
      assertInteger('snapshot.throughSequence', input.throughSequence, 0, threadRow.messageCount);
      // The summary must be one of this thread's. If a redaction has made it stale since the engine read it, the
      // snapshot is stored stale too: loading it would drop the summary and with it everything before the
      // boundary. FOR SHARE waits for a redaction in progress on it, so its outcome is the one seen.
      let stale = false;
      if (summaryId !== null) {
        const [summary] = await tx
          .select({ stale: agentSummary.stale })
          .from(agentSummary)
          .where(and(ofThread(context, agentSummary, thread), eq(agentSummary.id, summaryId)))
          .for('share');
        if (!summary) throw new NotFoundError({ entity: 'summary', id: summaryId });
        stale = summary.stale;
      }
      const rows = rowsOf<{ id: string }>(
        await tx.execute(sql`
          insert into ${agentContextSnapshot} (tenant_id, thread_id, user_id, version, through_sequence, summary_id, included_sequences,
            pruned, budget, policy_version, messages_hash, step_number, stale)
          select ${context.tenantId}, ${thread}, ${threadRow.userId}::text, ${expectedVersion + 1}, ${input.throughSequence}, ${summaryId},
            ${JSON.stringify(input.includedSequences)}::jsonb, ${pruned}::jsonb,
            ${budget}::jsonb, ${policyVersion}, ${messagesHash}, ${stepNumber}, ${stale}
          where (select coalesce(max(version), 0) from ${agentContextSnapshot}
                 where tenant_id = ${context.tenantId} and thread_id = ${thread}) = ${expectedVersion}
            and ${input.throughSequence} >= coalesce((select through_sequence from ${agentContextSnapshot}
                 where tenant_id = ${context.tenantId} and thread_id = ${thread} and not stale
                 order by version desc limit 1), 0)
          returning id`),
      );
      if (rows.length === 0) throw await refusal(context, tx, thread, expectedVersion, input.throughSequence);
      const [row] = await tx
        .select(snapshotColumns(context))
        .from(agentContextSnapshot)
        .where(and(eq(agentContextSnapshot.tenantId, context.tenantId), eq(agentContextSnapshot.id, rows[0]!.id)));
      return toSnapshot(row!);
    });
  } catch (error) {
    // Two writers with the same expected version: the unique (thread, version) index lets one through.
    if (postgresErrorCode(error) === '23505') throw new VersionConflictError({ entity: 'snapshot', expectedVersion });
    throw error;
  }
}
