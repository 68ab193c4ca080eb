import { and, asc, eq, gt, inArray, ne, notInArray, sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import { storedTokenCountId } from '../tokens/count-stored-message-tokens.js';
import { inTenant, type StoreContext } from './store-context.js';
import { storedTokenCount } from './stored-token-count.js';
import { reindexStaleSearchVectors } from './search-indexing.js';

/** What {@link rebuildDerivedData} rebuilds. */
export interface RebuildDerivedDataOptions {
  /**
   * Recount every finished message whose `tokenCounterId` is not the store's counter's (a new tokenizer or count
   * version), or that has no per-part counts (`partTokenCounts`), writing its
   * count and its part counts together. @default true
   */
  tokenCounts?: boolean;
  /**
   * The summary policy version in force: every summary written under another version is marked stale (with every
   * snapshot built on it), so the context engine summarizes those ranges again on the thread's next turn, only
   * where a turn needs it. @default undefined (summaries untouched)
   */
  summaryPolicyVersion?: string;
  /**
   * Recompute every search vector made by another text extraction than the database's (`search_version` against
   * `agent_history_search_version()`, raised by a release that changes the extraction or its dictionary). Until a
   * message is recomputed, searches match it by its older vector. Messages without a vector are
   * `indexPendingMessages`'s. @default true
   */
  searchVectors?: boolean;
  /** Rows per transaction (each batch is one short transaction). @default 200 */
  batchSize?: number;
  /** Called after every batch. Throw from it (or abort `signal`) to stop; a later call continues where it stopped. */
  onProgress?: (progress: RebuildProgress) => void | Promise<void>;
  /** Stops between batches. */
  signal?: AbortSignal;
}

/** One batch done, as {@link RebuildDerivedDataOptions.onProgress} reports it. */
export interface RebuildProgress {
  /** The tenant being rebuilt. */
  tenantId: string;
  /** What the batch rebuilt. */
  kind: 'token-counts' | 'summaries' | 'search-vectors';
  /** Rows rebuilt by this batch. */
  batch: number;
  /** Rows of this kind rebuilt so far by this call. */
  done: number;
}

/** What {@link rebuildDerivedData} changed. */
export interface RebuildResult {
  /** Messages recounted. */
  tokenCounts: number;
  /** Summaries marked stale (their snapshots too). */
  summaries: number;
  /** Search vectors recomputed with the current extraction. */
  searchVectors: number;
}

/**
 * Rebuilds one tenant's derived data whose version marker is not the current one, in batches of short
 * transactions through the app login (row-level security holds throughout). Idempotent and resumable by the
 * markers themselves: a row rebuilt carries the current version, so a second call, or a call after a crash,
 * only touches what is left. Safe while the app runs: a message is recounted only if its parts are still those
 * that were counted (a concurrent redaction or reopening wins), and no sequence, part or status is written.
 */
export async function rebuildDerivedData(
  context: StoreContext,
  options: RebuildDerivedDataOptions = {},
): Promise<RebuildResult> {
  const {
    tokenCounts = true,
    summaryPolicyVersion,
    searchVectors = true,
    batchSize = 200,
    onProgress,
    signal,
  } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
    throw new InvalidArgumentError({ argument: 'batchSize', value: batchSize, message: 'expected 1 to 10000.' });
  if (summaryPolicyVersion !== undefined && (typeof summaryPolicyVersion !== 'string' || summaryPolicyVersion === ''))
    throw new InvalidArgumentError({
      argument: 'summaryPolicyVersion',
      value: summaryPolicyVersion,
      message: 'expected a non-empty string.',
    });
  const report = (kind: RebuildProgress['kind'], batch: number, done: number) =>
    onProgress?.({ tenantId: context.tenantId, kind, batch, done });
  const result: RebuildResult = { tokenCounts: 0, summaries: 0, searchVectors: 0 };
  if (tokenCounts) {
    for (let cursor: string | null = null; ;) {
      signal?.throwIfAborted();
      const batch = await recountBatch(context, cursor, batchSize);
      if (batch.read === 0) break;
      cursor = batch.lastId;
      result.tokenCounts += batch.updated;
      await report('token-counts', batch.updated, result.tokenCounts);
    }
  }
  if (summaryPolicyVersion !== undefined) {
    for (;;) {
      signal?.throwIfAborted();
      const marked = await staleSummaryBatch(context, summaryPolicyVersion, batchSize);
      if (marked === 0) break;
      result.summaries += marked;
      await report('summaries', marked, result.summaries);
    }
  }
  while (searchVectors) {
    signal?.throwIfAborted();
    const reindexed = await reindexStaleSearchVectors(context, batchSize);
    if (reindexed === 0) break;
    result.searchVectors += reindexed;
    await report('search-vectors', reindexed, result.searchVectors);
  }
  return result;
}

/** Reads a batch of finished messages counted with another counter, counts them outside any transaction, writes. */
async function recountBatch(context: StoreContext, cursor: string | null, limit: number) {
  const { agentMessage } = context.tables;
  const counterId = storedTokenCountId(await context.tokenCounter);
  const rows = await inTenant(context, (tx) =>
    tx
      .select({
        id: agentMessage.id,
        messageId: agentMessage.messageId,
        role: agentMessage.role,
        parts: agentMessage.parts,
        partsHash: sql<string>`md5(${agentMessage.parts}::text)`,
      })
      .from(agentMessage)
      .where(
        and(
          eq(agentMessage.tenantId, context.tenantId),
          notInArray(agentMessage.status, ['pending', 'streaming']),
          sql`(${agentMessage.tokenCounterId} is distinct from ${counterId} or ${agentMessage.partTokenCounts} is null)`,
          cursor === null ? undefined : gt(agentMessage.id, cursor),
        ),
      )
      .orderBy(asc(agentMessage.id))
      .limit(limit),
  );
  if (rows.length === 0) return { read: 0, updated: 0, lastId: cursor };
  const counted = await Promise.all(
    rows.map(async (row) => {
      const message = { id: row.messageId, role: row.role, parts: row.parts as StoredMessagePart[] };
      const { tokenCount, partTokenCounts } = await storedTokenCount(context, message);
      return { ...row, tokenCount, parts: partTokenCounts === null ? null : `{${partTokenCounts.join(',')}}` };
    }),
  );
  const values = sql.join(
    counted.map(
      (row) => sql`(${row.id}::uuid, ${row.tokenCount}::integer, ${row.parts}::integer[], ${row.partsHash}::text)`,
    ),
    sql`, `,
  );
  // Only where the parts are still those counted: a concurrent redaction or reopening keeps its own counts. A row
  // whose counts come out the same (a counter whose part counts are not integers stores none) is left as it is, so
  // a second call changes nothing.
  const updated = await inTenant(context, (tx) =>
    tx.execute(sql`update ${agentMessage}
      set token_count = v.count, token_counter_id = ${counterId}, part_token_counts = v.parts
      from (values ${values}) as v(id, count, parts, hash)
      where ${agentMessage.tenantId} = ${context.tenantId} and ${agentMessage.id} = v.id
        and md5(${agentMessage.parts}::text) = v.hash and status not in ('pending', 'streaming')
        and (token_counter_id is distinct from ${counterId} or token_count is distinct from v.count
          or part_token_counts is distinct from v.parts)
      returning 1`),
  );
  return { read: rows.length, updated: rowCount(updated), lastId: rows.at(-1)!.id };
}

/** Marks up to `limit` fresh summaries of another policy version stale, and the snapshots built on them. */
async function staleSummaryBatch(context: StoreContext, policyVersion: string, limit: number): Promise<number> {
  const { agentSummary, agentContextSnapshot } = context.tables;
  return inTenant(context, async (tx) => {
    const picked = tx
      .select({ id: agentSummary.id })
      .from(agentSummary)
      .where(
        and(
          eq(agentSummary.tenantId, context.tenantId),
          eq(agentSummary.stale, false),
          ne(agentSummary.policyVersion, policyVersion),
        ),
      )
      .limit(limit);
    const marked = await tx
      .update(agentSummary)
      .set({ stale: true })
      .where(and(eq(agentSummary.tenantId, context.tenantId), inArray(agentSummary.id, picked)))
      .returning({ id: agentSummary.id });
    if (marked.length > 0)
      await tx
        .update(agentContextSnapshot)
        .set({ stale: true })
        .where(
          and(
            eq(agentContextSnapshot.tenantId, context.tenantId),
            inArray(
              agentContextSnapshot.summaryId,
              marked.map((row) => row.id),
            ),
          ),
        );
    return marked.length;
  });
}

function rowCount(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  const { rows, rowCount: count } = result as { rows?: unknown[]; rowCount?: number | null };
  return rows?.length ?? count ?? 0;
}
