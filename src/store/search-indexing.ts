import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { assertInteger } from '../errors/assert-input.js';
import { rowsOf } from '../tenant/database.js';
import { inTenant, type StoreContext } from './store-context.js';
import type { SearchIndexing } from './store-context-parts.js';

/** Throws unless `value` is a {@link SearchIndexing}. */
export function assertSearchIndexing(value: unknown): asserts value is SearchIndexing {
  if (value !== 'inline' && value !== 'background' && value !== 'deferred' && value !== false) {
    throw new InvalidArgumentError({
      argument: 'search',
      value,
      message: "expected 'inline', 'background', 'deferred' or false.",
    });
  }
}

/**
 * For an UPDATE of a message's parts by a store that does not index inline (a checkpoint, a finalize): writes
 * `search_version` -1, which the row's BEFORE trigger reads as "store no vector" instead of computing it. A value in
 * the row, not a setting, so that it reaches the worker on Citus (which refuses a volatile `set_config` in an
 * UPDATE). Empty when inline.
 */
export function deferredSearchVector(context: StoreContext): { searchVersion?: number } {
  if (context.search === 'inline') return {};
  return { searchVersion: -1 };
}

/** What `indexPendingMessages` did. */
export interface IndexPendingResult {
  /** The messages it indexed. */
  indexed: number;
  /**
   * Whether messages without a vector are left that it could index (beyond `limit`, or held by another transaction
   * while it ran): call again while true. A message still pending or streaming is not counted.
   */
  remaining: boolean;
}

/** The options of `indexPendingMessages`. */
export interface IndexPendingMessagesOptions {
  /** The most messages indexed by this call (one statement, one commit). @default 1000 (1 to 100000) */
  limit?: number;
}

/**
 * Computes the search vector of up to `limit` of the tenant's messages stored without one (by a store with
 * `search: 'background'`, `'deferred'` or `false`), in one statement; rows another call is indexing are skipped, and
 * so are messages still pending or streaming (their checkpoints would write them again; their finalize leaves them
 * pending). Returns how many it indexed, and whether any other is left (beyond `limit`, or held by another
 * transaction): call it again while one is.
 */
export async function indexPendingMessages(
  context: StoreContext,
  options: IndexPendingMessagesOptions = {},
): Promise<IndexPendingResult> {
  const limit = assertInteger('options.limit', options.limit ?? 1000, 1, 100_000);
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    // Any vector written is replaced by the search vector trigger with the one of the row version the UPDATE writes (a
    // concurrent redaction is waited for and the condition rechecked), so it is never that of older parts.
    const settled = sql`search_vector is null and status not in ('pending', 'streaming')`;
    const rows = rowsOf<{ indexed: string }>(
      await tx.execute(sql`
        with pending as (
          select id from ${agentMessage}
          where tenant_id = ${context.tenantId} and ${settled}
          limit ${limit}
          for update skip locked
        ), indexed as (
          update ${agentMessage} m set search_vector = ''::tsvector
          from pending
          where m.tenant_id = ${context.tenantId} and m.id = pending.id and m.search_vector is null
          returning 1
        )
        select count(*) as indexed from indexed`),
    );
    // A second statement, which sees the rows just indexed with their vector: what is left is beyond the limit, or
    // held by another transaction (a redaction, an exclusion, another indexer) and left for a later call.
    const left = rowsOf<{ remaining: boolean }>(
      await tx.execute(
        sql`select exists (select 1 from ${agentMessage} where tenant_id = ${context.tenantId} and ${settled}) as remaining`,
      ),
    );
    return { indexed: Number(rows[0]?.indexed ?? 0), remaining: left[0]?.remaining === true };
  });
}

/**
 * Recomputes up to `limit` of the tenant's search vectors made by another extraction version than the database's
 * (`agent_history_search_version()`), in one statement: writing an empty vector makes the trigger compute the one of
 * the current parts and stamp the current version. Rows another transaction holds are skipped (a later call takes
 * them); no part, count, sequence or timestamp is written. Returns how many now carry the current version: 0 when
 * none is left (or when no trigger stamps it, so that a loop over batches ends).
 */
export async function reindexStaleSearchVectors(context: StoreContext, limit: number): Promise<number> {
  const { agentMessage } = context.tables;
  const schema = getTableConfig(agentMessage).schema;
  // A scalar subquery: the function runs once per statement, not once per row.
  const version = sql.raw(`(select ${schema === undefined ? '' : `"${schema}".`}agent_history_search_version())`);
  return inTenant(context, async (tx) => {
    const rows = rowsOf<{ reindexed: string }>(
      await tx.execute(sql`
        with stale as (
          select id from ${agentMessage}
          where tenant_id = ${context.tenantId} and search_vector is not null
            and search_version is distinct from ${version}
          limit ${limit}
          for update skip locked
        ), reindexed as (
          update ${agentMessage} m set search_vector = ''::tsvector
          from stale
          where m.tenant_id = ${context.tenantId} and m.id = stale.id
          returning m.search_version is not distinct from ${version} as current
        )
        select count(*) filter (where current) as reindexed from reindexed`),
    );
    return Number(rows[0]?.reindexed ?? 0);
  });
}
