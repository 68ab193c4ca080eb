import { and, eq, sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import type { SummarySourceVersion } from '../model/context-store.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { ofThread } from './of-thread.js';
import type { StoreContext } from './store-context.js';

/** `summary.sourceVersions` checked: an array of `{ sequence, contentVersion }` with positive integers. */
export function assertSourceVersions(value: unknown): Map<number, number> {
  const versions = new Map<number, number>();
  if (value === undefined) return versions;
  const valid =
    Array.isArray(value) &&
    value.length <= 1_000_000 &&
    value.every(
      (item: unknown) =>
        typeof item === 'object' &&
        item !== null &&
        Number.isSafeInteger((item as SummarySourceVersion).sequence) &&
        (item as SummarySourceVersion).sequence > 0 &&
        Number.isSafeInteger((item as SummarySourceVersion).contentVersion) &&
        (item as SummarySourceVersion).contentVersion > 0,
    );
  if (!valid)
    throw new InvalidArgumentError({
      argument: 'summary.sourceVersions',
      value,
      message: 'expected an array of { sequence, contentVersion } with positive integers.',
    });
  for (const { sequence, contentVersion } of value as SummarySourceVersion[])
    versions.set(sequence, Math.min(contentVersion, versions.get(sequence) ?? contentVersion));
  return versions;
}

/**
 * Refuses a summary whose sources changed since they were read: a covered message with a higher content version
 * (redacted), or a previous summary made stale. The rows are locked FOR SHARE, so a redaction that has not committed
 * yet is waited for and then seen; one that starts later waits for this transaction and marks the summary stale.
 */
export async function assertSourcesCurrent(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
  sources: Map<number, number>,
  previousSummaryId: string | null,
): Promise<void> {
  const { agentMessage, agentSummary } = context.tables;
  if (sources.size > 0) {
    const rows = await tx
      .select({ sequence: agentMessage.sequence, contentVersion: agentMessage.contentVersion })
      .from(agentMessage)
      .where(
        and(
          ofThread(context, agentMessage, threadId),
          // One array parameter, not one parameter per sequence (a summary may cover more than 65,535 messages).
          sql`${agentMessage.sequence} = any(${`{${[...sources.keys()].join(',')}}`}::bigint[])`,
        ),
      )
      .for('share');
    for (const row of rows) {
      const read = sources.get(Number(row.sequence))!;
      if (row.contentVersion !== read)
        throw new VersionConflictError({
          entity: `summary source (message ${Number(row.sequence)})`,
          expectedVersion: read,
          actualVersion: row.contentVersion,
        });
    }
  }
  if (previousSummaryId !== null) {
    const [previous] = await tx
      .select({ stale: agentSummary.stale })
      .from(agentSummary)
      .where(and(ofThread(context, agentSummary, threadId), eq(agentSummary.id, previousSummaryId)))
      .for('share');
    if (previous?.stale)
      throw new VersionConflictError({ entity: `previous summary ${previousSummaryId}`, expectedVersion: 1 });
  }
}
