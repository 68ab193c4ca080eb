import type { RebuildDerivedDataOptions, RebuildResult } from './rebuild-derived-data.js';

/** Rebuilding what the store derives from messages, when its version changes. Part of `TenantHistory`. */
export interface DerivedDataOperations {
  /**
   * Rebuilds this tenant's derived data whose version marker is not the current one: token counts made by
   * another counter (recounted with the store's), summaries of another policy version (marked stale, so the
   * engine summarizes again where a turn needs it), search vectors of another text extraction (recomputed). Batches of short transactions; idempotent and resumable (the
   * markers say what is done); safe while the app appends.
   * @throws {InvalidArgumentError} A `batchSize` outside 1..10000 or an empty `summaryPolicyVersion`.
   */
  rebuildDerivedData(options?: RebuildDerivedDataOptions): Promise<RebuildResult>;
}
