import { and, asc, desc, eq, gt, isNull, lte, sql } from 'drizzle-orm';
import { getTableColumns } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { rowsOf } from '../tenant/database.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { inTenant, postgresErrorCode, type StoreContext } from './store-context.js';
import { assertInteger, assertOptionalText, assertThreadId, assertUuid } from '../errors/assert-input.js';
import { requireThread } from './require-thread.js';
import { AgentHistoryError } from '../errors/agent-history-error.js';
import { assertStorableJson } from './validate-message.js';
import type { StoredSnapshot, StoredSummary } from '../model/stored-rows.js';
import type { LoadedThreadContext, NewSnapshot, NewSummary } from '../model/context-store.js';

function summaryColumns(context: StoreContext) {
  const { tenantId: _tenantId, updatedAt: _updatedAt, ...columns } = getTableColumns(context.tables.agentSummary);
  return columns;
}

function snapshotColumns(context: StoreContext) {
  const { tenantId: _tenantId, ...columns } = getTableColumns(context.tables.agentContextSnapshot);
  return columns;
}

/**
 * The newest valid snapshot, its summary and the tail strictly after its inclusive boundary, read in one
 * repeatable-read transaction so the parts come from one state of the database. The tail holds every message
 * (all states); the context engine filters. Its size is bounded by `maxTailMessages`, whatever the thread's length.
 */
export function loadContext(
  context: StoreContext,
  threadId: string,
  { maxTailMessages = 2000 }: { maxTailMessages?: number } = {},
): Promise<LoadedThreadContext> {
  const thread = assertThreadId(threadId);
  assertInteger('options.maxTailMessages', maxTailMessages, 1, 100_000);
  const { agentContextSnapshot, agentSummary, agentMessage } = context.tables;
  return inTenant(
    context,
    async (tx) => {
      const threadRow = await requireThread(context, tx, thread);
      const tenantThread = (table: typeof agentSummary | typeof agentContextSnapshot) =>
        and(eq(table.tenantId, context.tenantId), eq(table.threadId, thread));
      const [[snapshot], [latestSummary], [versionRow]] = await Promise.all([
        tx
          .select(snapshotColumns(context))
          .from(agentContextSnapshot)
          .where(and(tenantThread(agentContextSnapshot), eq(agentContextSnapshot.stale, false)))
          .orderBy(desc(agentContextSnapshot.version))
          .limit(1),
        tx
          .select(summaryColumns(context))
          .from(agentSummary)
          .where(and(tenantThread(agentSummary), eq(agentSummary.stale, false)))
          .orderBy(desc(agentSummary.throughSequence), desc(agentSummary.createdAt))
          .limit(1),
        tx
          .select({ version: sql<number>`coalesce(max(${agentContextSnapshot.version}), 0)` })
          .from(agentContextSnapshot)
          .where(tenantThread(agentContextSnapshot)),
      ]);
      let summary: StoredSummary | null = null;
      if (snapshot?.summaryId) {
        const [row] = await tx
          .select(summaryColumns(context))
          .from(agentSummary)
          .where(
            and(tenantThread(agentSummary), eq(agentSummary.id, snapshot.summaryId), eq(agentSummary.stale, false)),
          );
        summary = row ? toSummary(row) : null;
      }
      const boundary = snapshot ? Number(snapshot.throughSequence) : 0;
      const rows = await tx
        .select(messageColumns(context.tables))
        .from(agentMessage)
        .where(
          and(
            eq(agentMessage.tenantId, context.tenantId),
            eq(agentMessage.threadId, thread),
            gt(agentMessage.sequence, boundary),
            isNull(agentMessage.deletedAt),
          ),
        )
        .orderBy(desc(agentMessage.sequence))
        .limit(maxTailMessages + 1);
      const tail = rows
        .slice(0, maxTailMessages)
        .reverse()
        .map((row) => toStoredMessage(row));
      const pinnedRows =
        boundary === 0
          ? []
          : await tx
              .select(messageColumns(context.tables))
              .from(agentMessage)
              .where(
                and(
                  eq(agentMessage.tenantId, context.tenantId),
                  eq(agentMessage.threadId, thread),
                  lte(agentMessage.sequence, boundary),
                  eq(agentMessage.pinned, true),
                  isNull(agentMessage.deletedAt),
                ),
              )
              .orderBy(asc(agentMessage.sequence));
      return {
        thread: threadRow,
        snapshot: snapshot ? toSnapshot(snapshot) : null,
        summary,
        latestSummary: latestSummary ? toSummary(latestSummary) : null,
        tail,
        pinned: pinnedRows.map((row) => toStoredMessage(row)),
        tailTruncated: rows.length > maxTailMessages,
        currentVersion: Number(versionRow?.version ?? 0),
      };
    },
    { isolationLevel: 'repeatable read' },
  );
}

type SummaryRow = Omit<StoreContext['tables']['agentSummary']['$inferSelect'], 'tenantId' | 'updatedAt'>;
type SnapshotRow = Omit<StoreContext['tables']['agentContextSnapshot']['$inferSelect'], 'tenantId'>;

function toSummary(row: SummaryRow): StoredSummary {
  return { ...row, fromSequence: Number(row.fromSequence), throughSequence: Number(row.throughSequence) };
}

function toSnapshot(row: SnapshotRow): StoredSnapshot {
  return { ...row, throughSequence: Number(row.throughSequence) };
}

/** A required short string (a policy version, a hash): typed errors instead of a NOT NULL or encoding failure in SQL. */
function assertRequiredText(argument: string, value: unknown): string {
  const text = assertOptionalText(argument, value, 200);
  if (text === null || text.length === 0)
    throw new InvalidArgumentError({ argument, value, message: 'expected a non-empty string.' });
  return text;
}

/** Null, or a uuid. */
function assertOptionalUuid(argument: string, value: unknown): string | null {
  return value === undefined || value === null ? null : assertUuid(argument, value);
}

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

/**
 * Stores a summary artifact over an inclusive sequence range of the thread. Empty content is refused, so a
 * failed summarizer call can never write a summary.
 */
export function writeSummary(context: StoreContext, threadId: string, input: NewSummary): Promise<StoredSummary> {
  const thread = assertThreadId(threadId);
  if (typeof input.content !== 'string' || input.content.trim().length === 0) {
    throw new InvalidArgumentError({
      argument: 'summary.content',
      value: input.content,
      message: 'a summary must have content.',
    });
  }
  if (input.content.includes('\u0000') || !input.content.isWellFormed()) {
    throw new InvalidArgumentError({
      argument: 'summary.content',
      value: input.content,
      message: 'contains NUL or a lone surrogate.',
    });
  }
  assertInteger('summary.tokenCount', input.tokenCount, 0, 10_000_000);
  const policyVersion = assertRequiredText('summary.policyVersion', input.policyVersion);
  const tokenCounterId = assertOptionalText('summary.tokenCounterId', input.tokenCounterId, 200);
  const summarizerModel = assertOptionalText('summary.summarizerModel', input.summarizerModel, 200);
  const previousSummaryId = assertOptionalUuid('summary.previousSummaryId', input.previousSummaryId);
  return inTenant(context, async (tx) => {
    const threadRow = await requireThread(context, tx, thread);
    assertInteger('summary.fromSequence', input.fromSequence, 1, Math.max(1, threadRow.messageCount));
    assertInteger('summary.throughSequence', input.throughSequence, input.fromSequence, threadRow.messageCount);
    const [row] = await tx
      .insert(context.tables.agentSummary)
      .values({
        tenantId: context.tenantId,
        threadId: thread,
        fromSequence: input.fromSequence,
        throughSequence: input.throughSequence,
        content: input.content,
        tokenCount: input.tokenCount,
        tokenCounterId,
        summarizerModel,
        policyVersion,
        previousSummaryId,
      })
      .returning(summaryColumns(context));
    return toSummary(row!);
  });
}

/**
 * Writes snapshot `expectedVersion + 1`. When another writer got there first, nothing is written and a
 * {@link VersionConflictError} is raised: a snapshot is never overwritten. The boundary is inclusive and must
 * lie within the thread.
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
  const { agentContextSnapshot, agentSummary } = context.tables;
  try {
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
          .where(
            and(
              eq(agentSummary.tenantId, context.tenantId),
              eq(agentSummary.threadId, thread),
              eq(agentSummary.id, summaryId),
            ),
          )
          .for('share');
        if (!summary) throw new NotFoundError({ entity: 'summary', id: summaryId });
        stale = summary.stale;
      }
      const rows = rowsOf<{ id: string }>(
        await tx.execute(sql`
          insert into ${agentContextSnapshot} (tenant_id, thread_id, version, through_sequence, summary_id, included_sequences,
            pruned, budget, policy_version, messages_hash, stale)
          select ${context.tenantId}, ${thread}, ${expectedVersion + 1}, ${input.throughSequence}, ${summaryId},
            ${JSON.stringify(input.includedSequences)}::jsonb, ${pruned}::jsonb,
            ${budget}::jsonb, ${policyVersion}, ${messagesHash}, ${stale}
          where (select coalesce(max(version), 0) from ${agentContextSnapshot}
                 where tenant_id = ${context.tenantId} and thread_id = ${thread}) = ${expectedVersion}
          returning id`),
      );
      if (rows.length === 0) {
        const [current] = await tx
          .select({ version: sql<number>`coalesce(max(${agentContextSnapshot.version}), 0)` })
          .from(agentContextSnapshot)
          .where(and(eq(agentContextSnapshot.tenantId, context.tenantId), eq(agentContextSnapshot.threadId, thread)));
        throw new VersionConflictError({
          entity: 'snapshot',
          expectedVersion,
          actualVersion: Number(current?.version),
        });
      }
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

/** The thread's summaries, oldest range first (stale ones included, flagged). */
export function listSummaries(context: StoreContext, threadId: string): Promise<StoredSummary[]> {
  const thread = assertThreadId(threadId);
  const { agentSummary } = context.tables;
  return inTenant(context, async (tx) => {
    await requireThread(context, tx, thread);
    const rows = await tx
      .select(summaryColumns(context))
      .from(agentSummary)
      .where(and(eq(agentSummary.tenantId, context.tenantId), eq(agentSummary.threadId, thread)))
      .orderBy(asc(agentSummary.throughSequence), asc(agentSummary.createdAt));
    return rows.map(toSummary);
  });
}
