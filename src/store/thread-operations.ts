import type { StoredRun, StoredThread } from '../model/stored-rows.js';
import type { AuditOptions } from './audit.js';
import type { RetentionOptions } from './retention.js';
import type { FailRunOptions, FinishRunOptions, StartRunOptions } from './runs.js';
import type { ForkThreadOptions } from './fork-thread.js';
import type {
  CreateThreadOptions,
  ListThreadsOptions,
  RenameThreadOptions,
  ThreadPage,
  UpdateThreadMetadataOptions,
} from './threads.js';

/**
 * The threads and runs of one tenant, and retention: the part of `TenantHistory` that creates, reads,
 * changes, forks and deletes threads and records model runs.
 */
export interface ThreadOperations {
  /**
   * Creates a thread.
   *
   * @throws {InvalidArgumentError} `id` is not a uuid, or `userId` or `title` is not a string of at most 200 and
   * 1000 characters without NUL or lone surrogates.
   * @throws {InvalidMessageError} `metadata` is not a JSON object.
   * @throws {DatabaseError} `23505` when a thread with your `id` already exists.
   * @example
   * const thread = await store.createThread({ userId: session.userId, title: 'Trip to Lisbon' });
   */
  createThread(options?: CreateThreadOptions): Promise<StoredThread>;

  /**
   * A live thread.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted (or the id is not a uuid).
   */
  getThread(threadId: string): Promise<StoredThread>;

  /**
   * A page of the tenant's live threads, newest activity first, keyset-paged on `(last_message_at, id)`.
   *
   * @throws {InvalidArgumentError} `limit` is not an integer from 1 to 200, `userId` is not a short string, or
   * `cursor` is not a `nextCursor` returned by `listThreads`.
   * @example
   * let page = await store.listThreads({ userId: 'u1' });
   * while (page.nextCursor) page = await store.listThreads({ userId: 'u1', cursor: page.nextCursor });
   */
  listThreads(options?: ListThreadsOptions): Promise<ThreadPage>;

  /**
   * Sets (or, with `null`, clears) a live thread's title. With `derivedFrom` (a generated title), a redaction of one
   * of those messages clears it in the thread and its forks.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `title` is not a string of at most 1000 characters without NUL or lone surrogates,
   * or `derivedFrom` is not 1 to 10 message ids.
   */
  renameThread(threadId: string, options: RenameThreadOptions): Promise<StoredThread>;

  /**
   * Replaces a live thread's metadata, keeping the store's own `agentHistory` key.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidMessageError} `metadata` is not a JSON object.
   */
  updateThreadMetadata(threadId: string, options: UpdateThreadMetadataOptions): Promise<StoredThread>;

  /**
   * Hides a thread from reads and refuses appends to it; its rows stay until `deleteThread` or retention. Audited.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or already soft-deleted.
   */
  softDeleteThread(threadId: string, options?: AuditOptions): Promise<void>;

  /**
   * Deletes a thread (soft-deleted or not) with its runs, messages, summaries and snapshots; the audit event stays.
   *
   * @throws {NotFoundError} The thread is missing or another tenant's.
   */
  deleteThread(threadId: string, options?: AuditOptions): Promise<void>;

  /**
   * A new thread holding copies of messages `1..atSequence` of `threadId` (same ids, parts, states and sequences;
   * a copy still pending or streaming becomes `failed`), continuing from `atSequence + 1`. The source is untouched.
   *
   * @throws {NotFoundError} The source thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `atSequence` is not an integer from 0 to the thread's message count, `id` is not
   * a uuid, or `title` or `userId` is not a short string.
   * @throws {DatabaseError} `23505` when a thread with your `id` already exists.
   * @example
   * const fork = await store.forkThread(thread.id, { atSequence: 4, title: 'Trip, plan B' });
   */
  forkThread(threadId: string, options: ForkThreadOptions): Promise<StoredThread>;

  /**
   * Starts a run (status `running`): one model invocation loop on a live thread.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `provider` or `model` is not a string of at most 200 characters.
   * @throws {InvalidMessageError} `metadata` is not a JSON object.
   * @example
   * const run = await store.startRun(thread.id, { provider: 'openai', model: 'gpt-5' });
   */
  startRun(threadId: string, options?: StartRunOptions): Promise<StoredRun>;

  /**
   * Ends a run with its status and token usage. Finishing a finished run again returns it unchanged.
   *
   * @throws {NotFoundError} The run is missing or another tenant's (or the id is not a uuid).
   * @throws {InvalidArgumentError} `status` is not completed, failed or cancelled, or a `usage` count is not an
   * integer from 0 to 2,147,483,647.
   * @throws {InvalidMessageError} `error` is not a JSON object.
   * @example
   * await store.finishRun(run.id, { status: 'completed', usage: { inputTokens: 812, outputTokens: 64 } });
   */
  finishRun(runId: string, options: FinishRunOptions): Promise<StoredRun>;

  /**
   * Ends a run as `failed`, recording the error's name and message (`finishRun` with `status: 'failed'`).
   *
   * @throws {NotFoundError} The run is missing or another tenant's.
   * @throws {InvalidArgumentError} A `usage` count is not an integer from 0 to 2,147,483,647.
   * @example
   * await store.failRun(run.id, { error, usage });
   */
  failRun(runId: string, options: FailRunOptions): Promise<StoredRun>;

  /**
   * One run.
   *
   * @throws {NotFoundError} The run is missing or another tenant's (or the id is not a uuid).
   */
  getRun(runId: string): Promise<StoredRun>;

  /**
   * Retention: deletes, in batches of whole threads, every thread of the tenant (soft-deleted ones included) whose
   * last activity is older than `olderThan`, with its runs, messages, summaries and snapshots. Audited per batch.
   * Returns how many threads were deleted.
   *
   * @throws {InvalidArgumentError} `olderThan` is not a valid `Date`, or `batchSize` is not an integer from 1 to 10,000.
   * @example
   * await store.deleteThreadsOlderThan({ olderThan: new Date(Date.now() - 90 * 86_400_000) });
   */
  deleteThreadsOlderThan(options: RetentionOptions): Promise<number>;
}
