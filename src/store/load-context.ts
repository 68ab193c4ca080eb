import { and, asc, desc, eq, gt, isNull, lte, sql, type SQL } from 'drizzle-orm';
import { assertInteger, assertThreadId } from '../errors/assert-input.js';
import type { LoadedThreadContext } from '../model/context-store.js';
import type { StoredMessage, StoredSnapshot, StoredSummary } from '../model/stored-rows.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { LoadContextOptions } from './context-artifact-operations.js';
import { snapshotColumns, summaryColumns, toSnapshot, toSummary } from './context-artifact-rows.js';
import { requireThread } from './require-thread.js';
import { messageColumns, threadColumns, toStoredMessage, toStoredThread, type MessageRow } from './row-mapping.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { fromColumnNames, callInOneStatement, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';
import { inTenant, sortOff, type StoreContext } from './store-context.js';
import { ofThread } from './of-thread.js';

/**
 * The newest valid snapshot, its summary and the tail strictly after its inclusive boundary, read in one
 * repeatable-read transaction so the parts come from one state of the database. The tail holds every message
 * (all states); the context engine filters. Its size is bounded by `maxTailMessages`, whatever the thread's length.
 */
export function loadContext(
  context: StoreContext,
  threadId: string,
  { maxTailMessages = 2000 }: LoadContextOptions = {},
): Promise<LoadedThreadContext> {
  const thread = assertThreadId(threadId);
  assertInteger('options.maxTailMessages', maxTailMessages, 1, 100_000);
  return loadContextChecked(context, thread, maxTailMessages);
}

/**
 * In one statement (the messages as json arrays), else (on the caller's transaction, on Citus) in a repeatable-read
 * transaction.
 */
async function loadContextChecked(
  context: StoreContext,
  thread: string,
  maxTailMessages: number,
): Promise<LoadedThreadContext> {
  await context.checkRowLevelSecurity();
  const args = [{ uuid: thread }, { integer: maxTailMessages }];
  let fast = await callInOneStatement<LoadContextRow>(context, 'agent_history_load_context_json', args);
  if (fast !== IN_TRANSACTION && fast !== THREAD_MISSING) {
    fast = fast.flatMap((row) =>
      row.kind === 'tail' || row.kind === 'pinned'
        ? (row.data as unknown[]).map((data) => ({ kind: row.kind, data }))
        : [row],
    );
  }
  if (fast === THREAD_MISSING) throw new NotFoundError({ entity: 'thread', id: thread });
  if (fast !== IN_TRANSACTION) return fromLoadContextRows(context, fast, maxTailMessages);
  return inTenant(
    context,
    async (tx) => {
      const threadRow = await requireThread(context, tx, thread);
      // The tail read walks the thread's index to its limit (see `listMessages`).
      await tx.execute(sortOff);
      const artifacts = await readArtifacts(context, tx, thread);
      const boundary = artifacts.snapshot ? artifacts.snapshot.throughSequence : 0;
      const messages = await readMessages(context, tx, thread, boundary, maxTailMessages);
      return {
        thread: threadRow,
        snapshot: artifacts.snapshot,
        summary: artifacts.summary,
        latestSummary: artifacts.latestSummary,
        tail: messages.tail,
        pinned: messages.pinned,
        tailTruncated: messages.tailTruncated,
        currentVersion: artifacts.currentVersion,
      };
    },
    { isolationLevel: 'repeatable read' },
  );
}

/** A row of the load function: a kind and the row (or, for the tail and the pinned, an array of message rows) as json. */
interface LoadContextRow {
  kind: string;
  data: unknown;
}

/** The rows of `agent_history_load_context_json`, one per message (kind, data as json), as {@link loadContext} returns them. */
function fromLoadContextRows(
  context: StoreContext,
  rows: LoadContextRow[],
  maxTailMessages: number,
): LoadedThreadContext {
  const of = (kind: string) =>
    rows.filter((row) => row.kind === kind).map((row) => row.data as Record<string, unknown>);
  const one = (kind: string) => of(kind)[0];
  const columns = messageColumns(context.tables);
  const messages = (kind: string) =>
    of(kind)
      .map((data) => toStoredMessage(fromColumnNames<MessageRow>(columns, data)))
      .sort((a, b) => a.sequence - b.sequence);
  const [thread, snapshot, summary, latestSummary] = ['thread', 'snapshot', 'summary', 'latestSummary'].map(one);
  const tail = messages('tail');
  return {
    thread: toStoredThread(fromColumnNames(threadColumns(context.tables), thread!)),
    snapshot: snapshot ? toSnapshot(fromColumnNames(snapshotColumns(context), snapshot)) : null,
    summary: summary ? toSummary(fromColumnNames(summaryColumns(context), summary)) : null,
    latestSummary: latestSummary ? toSummary(fromColumnNames(summaryColumns(context), latestSummary)) : null,
    tail: tail.slice(-maxTailMessages),
    pinned: messages('pinned'),
    tailTruncated: tail.length > maxTailMessages,
    currentVersion: Number(one('version') ?? 0),
  };
}

/** The newest valid snapshot with its summary (if still valid), the newest valid summary and the newest version. */
async function readArtifacts(
  context: StoreContext,
  tx: TenantTransaction,
  thread: string,
): Promise<{
  snapshot: StoredSnapshot | null;
  summary: StoredSummary | null;
  latestSummary: StoredSummary | null;
  currentVersion: number;
}> {
  const { agentContextSnapshot, agentSummary } = context.tables;
  const [[snapshot], [latestSummary], [versionRow]] = await Promise.all([
    tx
      .select(snapshotColumns(context))
      .from(agentContextSnapshot)
      .where(and(ofThread(context, agentContextSnapshot, thread), eq(agentContextSnapshot.stale, false)))
      .orderBy(desc(agentContextSnapshot.version))
      .limit(1),
    tx
      .select(summaryColumns(context))
      .from(agentSummary)
      .where(and(ofThread(context, agentSummary, thread), eq(agentSummary.stale, false)))
      .orderBy(desc(agentSummary.throughSequence), desc(agentSummary.createdAt))
      .limit(1),
    tx
      .select({ version: sql<number>`coalesce(max(${agentContextSnapshot.version}), 0)` })
      .from(agentContextSnapshot)
      .where(ofThread(context, agentContextSnapshot, thread)),
  ]);
  let summary: StoredSummary | null = null;
  if (snapshot?.summaryId) {
    const [row] = await tx
      .select(summaryColumns(context))
      .from(agentSummary)
      .where(
        and(
          ofThread(context, agentSummary, thread),
          eq(agentSummary.id, snapshot.summaryId),
          eq(agentSummary.stale, false),
        ),
      );
    summary = row ? toSummary(row) : null;
  }
  return {
    snapshot: snapshot ? toSnapshot(snapshot) : null,
    summary,
    latestSummary: latestSummary ? toSummary(latestSummary) : null,
    currentVersion: Number(versionRow?.version ?? 0),
  };
}

/**
 * The live messages strictly after `boundary` (the newest `maxTailMessages`, oldest first) and the pinned live
 * messages at or before it.
 */
async function readMessages(
  context: StoreContext,
  tx: TenantTransaction,
  thread: string,
  boundary: number,
  maxTailMessages: number,
): Promise<{ tail: StoredMessage[]; pinned: StoredMessage[]; tailTruncated: boolean }> {
  const { agentMessage } = context.tables;
  const liveMessages = (...conditions: SQL[]) =>
    and(ofThread(context, agentMessage, thread), ...conditions, isNull(agentMessage.deletedAt));
  const rows = await tx
    .select(messageColumns(context.tables))
    .from(agentMessage)
    .where(liveMessages(gt(agentMessage.sequence, boundary)))
    .orderBy(desc(agentMessage.sequence))
    .limit(maxTailMessages + 1);
  const pinnedRows =
    boundary === 0
      ? []
      : await tx
          .select(messageColumns(context.tables))
          .from(agentMessage)
          .where(liveMessages(lte(agentMessage.sequence, boundary), eq(agentMessage.pinned, true)))
          .orderBy(asc(agentMessage.sequence));
  return {
    tail: rows
      .slice(0, maxTailMessages)
      .reverse()
      .map((row) => toStoredMessage(row)),
    pinned: pinnedRows.map((row) => toStoredMessage(row)),
    tailTruncated: rows.length > maxTailMessages,
  };
}
