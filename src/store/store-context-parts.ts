import type { AppendItem } from './append-statements.js';

// The store-wide parts of a `StoreContext` whose own files (search-indexing.ts, one-statement-call.ts,
// append-batcher.ts) take a `StoreContext`: their types live here, so that store-context.ts imports none of those
// files and no import cycle forms between them.

/**
 * When a message's search vector is computed (`createAgentHistory({ search })`):
 * - `'inline'`: in the append itself (the search vector trigger): about 45 % of an append's WAL and 0.1–0.15
 *   ms of its database CPU (the `to_tsvector` and its GIN index entry);
 * - `'background'`: appends store no vector; the store itself indexes the tenants it wrote to in batches once it
 *   has been idle for 50 ms (at the latest a second after a write, however busy), off the append path and off the
 *   thread's lock. `history.drainSearch()` indexes them now (before a serverless function returns, say);
 * - `'deferred'`: appends store no vector; `indexPendingMessages()` fills them in batches (call it from a job).
 *   Indexing later rewrites the row, so it costs more in total than inline: it is for append latency, not volume;
 * - `false`: never indexed, for apps that do not search.
 *
 * `searchMessages` returns the same hits in every mode: a row without a vector is matched by computing it on the
 * fly, so a search scans the tenant's unindexed rows (slower the more of them there are). Whatever the mode, a
 * stored vector is that of the current parts or null: a change of the parts (a redaction) recomputes it.
 */
export type SearchIndexing = 'inline' | 'background' | 'deferred' | false;

/** Whether the one-statement functions (reads and writes) can be used; shared by every tenant of a store. */
export interface OneStatementReads {
  /** False once the database answered that it is a Citus coordinator. */
  available: boolean;
}

/** Combines concurrent appends into one statement per batch (see `appendBatching`). Internal. */
export interface AppendBatcher {
  /** The rows `agent_history_append_message` returns for this item, whether it was sent alone or in a batch. */
  submit<ROW>(tenantId: string, appRole: string | null, item: AppendItem): Promise<ROW[]>;
}
