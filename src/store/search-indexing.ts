import { sql, type SQL } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { assertInteger } from '../errors/assert-input.js';
import { rowsOf } from '../tenant/database.js';
import { inTenant, type StoreContext } from './store-context.js';
import type { SearchIndexing } from './store-context-parts.js';

/** Throws unless `value` is a {@link SearchIndexing}. */
export function assertSearchIndexing(value: unknown): asserts value is SearchIndexing {
  if (value !== 'inline' && value !== 'deferred' && value !== false) {
    throw new InvalidArgumentError({ argument: 'search', value, message: "expected 'inline', 'deferred' or false." });
  }
}

/**
 * For an UPDATE of a message's parts by a store that does not index inline (a checkpoint, a finalize): sets
 * `agent_history.search` for the transaction inside the SET list, which is evaluated before the row's BEFORE
 * trigger runs, so the trigger stores no vector instead of computing it. Empty when inline.
 */
export function deferredSearchVector(context: StoreContext): { searchVector?: SQL } {
  if (context.search === 'inline') return {};
  return {
    searchVector: sql`(case when set_config('agent_history.search', 'deferred', true) = '' then null end)::tsvector`,
  };
}

/** The options of `indexPendingMessages`. */
export interface IndexPendingMessagesOptions {
  /** The most messages indexed by this call (one statement, one commit). @default 1000 (1 to 100000) */
  limit?: number;
}

/**
 * Computes the search vector of up to `limit` of the tenant's messages stored without one (by a store with
 * `search: 'deferred'` or `false`), in one statement; rows another call is indexing are skipped. Returns how many
 * it indexed: call it again until 0 to index everything.
 */
export async function indexPendingMessages(
  context: StoreContext,
  options: IndexPendingMessagesOptions = {},
): Promise<{ indexed: number }> {
  const limit = assertInteger('options.limit', options.limit ?? 1000, 1, 100_000);
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    // Any vector written is replaced by the search vector trigger with the one of the row version the UPDATE writes (a
    // concurrent redaction is waited for and the condition rechecked), so it is never that of older parts.
    const rows = rowsOf<{ indexed: string }>(
      await tx.execute(sql`
        with pending as (
          select id from ${agentMessage}
          where tenant_id = ${context.tenantId} and search_vector is null
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
    return { indexed: Number(rows[0]?.indexed ?? 0) };
  });
}
