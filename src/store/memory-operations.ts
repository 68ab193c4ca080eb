import type { ContextRecalledItem } from '../model/context-store.js';
import {
  embedPendingMemory,
  type EmbedPendingMemoryOptions,
  type EmbedPendingMemoryResult,
} from './embed-pending-memory.js';
import { recallMessages, type RecallMessagesOptions } from './recall-messages.js';
import type { StoreContext } from './store-context.js';
import {
  getWorkingMemory,
  updateWorkingMemory,
  type UpdateWorkingMemoryOptions,
  type WorkingMemory,
  type WorkingMemoryOptions,
} from './working-memory.js';

/**
 * Memory across threads, part of `TenantHistory`: a working-memory document per user (or per thread), and recall of
 * what the same user said in their other threads (full-text always, vector similarity with an embedder). Every row is
 * the tenant's and, on a store scoped to a user, that user's (row-level security). What memory derived from a message
 * goes when the message is redacted (in the same transaction) or its thread deleted.
 */
export interface MemoryOperations {
  /**
   * The working-memory document of the store's user (`scope: 'user'`, the default on a store scoped to a user) or of
   * a thread (`scope: 'thread'`, the default otherwise), or null when none was written yet.
   *
   * @throws {NotFoundError} `threadId` (thread scope) is missing, another tenant's or user's, or soft-deleted.
   * @throws {InvalidArgumentError} An unknown scope, the user scope on a store with no user, or no `threadId` for the
   * thread scope.
   */
  getWorkingMemory(options?: WorkingMemoryOptions): Promise<WorkingMemory | null>;
  /**
   * Replaces the working-memory document, with optimistic concurrency: `expectedVersion` is the version read (0 when
   * there was none); the document becomes that version + 1.
   *
   * @throws {VersionConflictError} Another writer changed (or created) it first; nothing is written.
   * @throws {NotFoundError} As `getWorkingMemory`.
   * @throws {InvalidArgumentError} As `getWorkingMemory`; content that is not a string of at most 100,000 characters
   * without NUL or lone surrogates; an `expectedVersion` that is not a non-negative integer.
   */
  updateWorkingMemory(options: UpdateWorkingMemoryOptions): Promise<WorkingMemory>;
  /**
   * The messages of the same user's other threads most relevant to `query`, best first (reciprocal rank fusion of
   * full-text and, with an `embedder`, cosine similarity). Never another user's or tenant's; a thread with no user
   * recalls nothing.
   *
   * @throws {NotFoundError} `threadId` is missing, another tenant's or user's, or soft-deleted.
   * @throws {InvalidArgumentError} A query that is not a string (or holds NUL), a `limit` outside 1..50, an embedder
   * that is not `{ modelId, embed }` or returns vectors that do not fit.
   */
  recallMessages(options: RecallMessagesOptions): Promise<ContextRecalledItem[]>;
  /**
   * Embeds, in batches and off the append path, the messages that have no recall entry for their current text and
   * the embedder's model, and writes their entries. Resumable and safe beside writers.
   *
   * @throws {InvalidArgumentError} An embedder that is not `{ modelId, embed }` or returns vectors that do not fit,
   * a `batchSize` outside 1..2048 or a `maxMessages` outside 1..10,000,000.
   */
  embedPendingMemory(options: EmbedPendingMemoryOptions): Promise<EmbedPendingMemoryResult>;
}

/** The {@link MemoryOperations} of one tenant's store. */
export function memoryMethods(context: StoreContext): MemoryOperations {
  return {
    getWorkingMemory: async (options) => getWorkingMemory(context, options),
    updateWorkingMemory: async (options) => updateWorkingMemory(context, options),
    recallMessages: async (options) => recallMessages(context, options),
    embedPendingMemory: async (options) => embedPendingMemory(context, options),
  };
}
