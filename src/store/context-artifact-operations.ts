import type { MemoryEmbedder } from '../model/memory-embedder.js';
import type { ContextStore, ContextWorkingMemory } from '../model/context-store.js';
import type { StoredSnapshot, StoredSummary } from '../model/stored-rows.js';
import type { LoadedThreadContext, NewSnapshot, NewSummary } from '../model/context-store.js';

/** The options of `loadContext`. */
export interface LoadContextOptions {
  /** The most tail messages read (the newest ones); older ones are left out and `tailTruncated` is set. @default 2000 (1 to 100,000) */
  maxTailMessages?: number;
}

/** The options of `contextStore`. */
export interface ContextStoreOptions {
  /** The most tail messages each `loadContext` of the context store reads. @default 2000 (1 to 100,000) */
  maxTailMessages?: number;
  /**
   * Makes `loadMemory`'s recall hybrid: full-text and cosine similarity over the embeddings `embedPendingMemory`
   * wrote with this embedder's model, fused. @default none: full-text recall
   */
  embedder?: MemoryEmbedder;
  /**
   * Whose working-memory document `loadMemory` reads: the store's user's, shared by their threads, or the thread's own.
   * @default 'user' on a store scoped to a user, 'thread' otherwise
   */
  workingMemoryScope?: 'user' | 'thread';
}

/**
 * The Postgres {@link ContextStore} of one thread, with its working-memory document (the scope `contextStore` was
 * given): what a tool that lets the model update working memory reads and writes.
 */
export interface ThreadContextStore extends ContextStore {
  /** The working-memory document of the store's scope, or null. */
  getWorkingMemory(): Promise<ContextWorkingMemory | null>;
  /** Replaces it when its version is still `expectedVersion` (0: creates it); else `VersionConflictError`. */
  updateWorkingMemory(input: { content: string; expectedVersion: number }): Promise<ContextWorkingMemory>;
}

/**
 * The context engine's artifacts of one tenant: the part of `TenantHistory` that loads a thread's context and
 * writes its summaries and snapshots.
 */
export interface ContextArtifactOperations {
  /**
   * What the context engine starts from: the newest valid snapshot, its summary, the newest valid summary, the
   * messages strictly after the snapshot's inclusive boundary (every state; the engine filters) and the pinned ones
   * before it, read in one repeatable-read transaction.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `maxTailMessages` is not an integer from 1 to 100,000.
   */
  loadContext(threadId: string, options?: LoadContextOptions): Promise<LoadedThreadContext>;

  /**
   * Stores a summary artifact over an inclusive sequence range of the thread. Empty content is refused, so a
   * failed summarizer call can never write a summary.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} Empty content, a range outside the thread, a negative token count, an empty
   * `policyVersion`, or a `previousSummaryId` that is not a uuid.
   */
  writeSummary(threadId: string, summary: NewSummary): Promise<StoredSummary>;

  /**
   * Writes snapshot `expectedVersion + 1`; a snapshot is never overwritten. If a redaction made its summary stale
   * since it was read, the snapshot is stored stale.
   *
   * @throws {VersionConflictError} Another writer wrote that version first; nothing is written.
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted, or `summaryId` names no summary
   * of the thread.
   * @throws {InvalidArgumentError} A boundary outside the thread, sequences that are not positive integers, an
   * empty `policyVersion` or `messagesHash`, or `pruned`/`budget` that is not storable JSON.
   */
  writeSnapshot(threadId: string, snapshot: NewSnapshot): Promise<StoredSnapshot>;

  /**
   * The thread's summaries, oldest range first (stale ones included, flagged).
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   */
  listSummaries(threadId: string): Promise<StoredSummary[]>;

  /**
   * The context engine's persistence for one thread: `loadContext`, `writeSummary` and `writeSnapshot` bound to
   * it, plus full-text memory search within it. Pass it as `createContextManager({ store })`. Its methods throw as
   * the ones above do.
   *
   * @throws {NotFoundError} Synchronously, when `threadId` is not a uuid (a missing thread is reported by the
   * context store's first call).
   * @example
   * const manager = createContextManager({ store: store.contextStore(thread.id), model: 'gpt-4o', instructions });
   */
  contextStore(threadId: string, options?: ContextStoreOptions): ThreadContextStore;
}
