import type { ContextStore } from '../model/context-store.js';
import type { StoredMessage, StoredRun, StoredSnapshot, StoredSummary, StoredThread } from '../model/stored-rows.js';
import type { AppendMessageOptions, AppendResult } from './append-message.js';
import type {
  BeginAssistantMessageOptions,
  CheckpointMessageOptions,
  FinalizeMessageOptions,
} from './assistant-lifecycle.js';
import type { AuditOptions } from './audit.js';
import type { ContextView, WriteSnapshotInput, WriteSummaryInput } from './context-artifacts.js';
import type { ListMessagesOptions, MessagePage } from './list-messages.js';
import type { ExcludeMessagesOptions } from './message-state.js';
import type { RedactMessageOptions } from './redact-message.js';
import type { RetentionOptions } from './retention.js';
import type { FailRunOptions, FinishRunOptions, StartRunOptions } from './runs.js';
import type { SearchHit, SearchMessagesOptions } from './search-messages.js';
import type {
  CreateThreadOptions,
  ForkThreadOptions,
  ListThreadsOptions,
  RenameThreadOptions,
  ThreadPage,
  UpdateThreadMetadataOptions,
} from './threads.js';
import type { StorableMessage } from './validate-message.js';

// The contract of `forTenant()`. Every method is async and runs in its own transaction scoped to the tenant (set
// with `set_config(…, true)`, so a pooled connection never carries it over). Bad input is rejected before any SQL
// with a typed error naming the value, always as a rejected promise. A statement the database failed, or a lost
// connection, rejects with `DatabaseError` (code and server message only, never the statement's parameters); the
// `@throws` lists below name the other errors. Another tenant's row is "not found", like a missing one.

/** The options of `loadContext`. */
export interface LoadContextOptions {
  /** The most tail messages read (the newest ones); older ones are left out and `tailTruncated` is set. @default 2000 (1 to 100,000) */
  maxTailMessages?: number;
}

/** The options of `contextStore`. */
export interface ContextStoreOptions {
  /** The most tail messages each `loadContext` of the context store reads. @default 2000 (1 to 100,000) */
  maxTailMessages?: number;
}

/**
 * The store of one tenant, as `createAgentHistory({ db }).forTenant(tenantId)` returns it: threads, runs, the
 * message log, the assistant message lifecycle, context edits, redaction, retention and the context engine's
 * artifacts, every one scoped to the tenant.
 *
 * @example
 * const store = createAgentHistory({ db }).forTenant(tenantId);
 * const thread = await store.createThread({ userId: 'u1', title: 'Trip' });
 * await store.appendMessage(thread.id, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] });
 * const { messages } = await store.listMessages(thread.id);
 */
export interface TenantHistory {
  /** The tenant every method acts for: the id given to `forTenant`, lower-cased. */
  readonly tenantId: string;

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
   * Sets (or, with `null`, clears) a live thread's title.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `title` is not a string of at most 1000 characters without NUL or lone surrogates.
   */
  renameThread(threadId: string, options: RenameThreadOptions): Promise<StoredThread>;

  /**
   * Replaces a live thread's metadata.
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
   * Appends one `UIMessage` in one statement: the next sequence is taken from the thread row atomically with the
   * insert, so sequences are gapless and unique under any concurrency. Idempotent by message id and by
   * `clientRequestId`: a retry (or two identical requests racing) gets the stored row back with `created: false`.
   * The message is the value appended, not an option, so it is an argument of its own.
   *
   * @throws {InvalidMessageError} The message is malformed (names the path and the value): parts not an array, an
   * unknown role, a NUL character, a lone surrogate, metadata not a JSON object…
   * @throws {MessageTooLargeError} Its parts and metadata serialize to more than `maxMessageBytes`.
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted, or `runId` names no run of it.
   * @throws {InvalidArgumentError} `runId` is not a uuid, `clientRequestId` is not a string of 1 to 200
   * characters, `status` is not a message status, or `pinned` is not a boolean.
   * @example
   * const { stored, created } = await store.appendMessage(thread.id, userMessage, { clientRequestId: requestId });
   */
  appendMessage<UI_MESSAGE extends StorableMessage>(
    threadId: string,
    message: UI_MESSAGE,
    options?: AppendMessageOptions,
  ): Promise<AppendResult<UI_MESSAGE>>;

  /**
   * Appends an empty assistant message in `pending` state, holding a lease for `leaseMs`: call it before streaming
   * the answer, then `checkpointMessage` while it streams and `finalizeMessage` when it ends. Idempotent.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted, or `runId` names no run of it.
   * @throws {InvalidMessageError} `messageId` or `metadata` is malformed.
   * @throws {InvalidArgumentError} `runId` is not a uuid or `clientRequestId` is not a string of 1 to 200 characters.
   * @example
   * await store.beginAssistantMessage(thread.id, { messageId, runId: run.id });
   */
  beginAssistantMessage(threadId: string, options: BeginAssistantMessageOptions): Promise<AppendResult>;

  /**
   * Saves the parts streamed so far (status `streaming`) and renews the lease, so a crash loses at most what came
   * after the last checkpoint. Only a `pending` or `streaming` message that has not been redacted takes one.
   *
   * @throws {NotFoundError} The thread or the message is missing or another tenant's.
   * @throws {InvalidArgumentError} The message is no longer pending or streaming, or was redacted while streaming.
   * @throws {InvalidMessageError} `parts` or `metadata` is malformed.
   * @throws {MessageTooLargeError} The parts and metadata serialize to more than `maxMessageBytes`.
   */
  checkpointMessage(threadId: string, messageId: string, options: CheckpointMessageOptions): Promise<StoredMessage>;

  /**
   * Ends an assistant message as `completed`, `failed` or `cancelled` (an abort keeps the partial parts) and
   * stores its token count. Finalizing again with the same status returns the stored message (a retried `onEnd`).
   *
   * @throws {NotFoundError} The thread or the message is missing or another tenant's.
   * @throws {InvalidArgumentError} `status` is not completed, failed or cancelled; or the message already ended
   * with another status, or was redacted while streaming.
   * @throws {InvalidMessageError} `parts` or `metadata` is malformed.
   * @throws {MessageTooLargeError} The parts and metadata serialize to more than `maxMessageBytes`.
   * @example
   * await store.finalizeMessage(thread.id, messageId, { status: isAborted ? 'cancelled' : 'completed', parts });
   */
  finalizeMessage(threadId: string, messageId: string, options: FinalizeMessageOptions): Promise<StoredMessage>;

  /**
   * Marks as `failed` every pending or streaming message of the tenant whose lease has expired (its writer died),
   * keeping the parts it had checkpointed. Returns the recovered messages, in sequence order.
   */
  recoverAbandonedMessages(): Promise<StoredMessage[]>;

  /**
   * Takes messages out of the model's context; they stay in the log and in the history UI (a regenerate or an edit
   * supersedes, never deletes). All the messages change, or none. Audited, one event per message.
   *
   * @throws {NotFoundError} The thread or one of the messages is missing or another tenant's.
   * @throws {InvalidArgumentError} `messageIds` is not a non-empty array of message ids, `reason` is not a string of
   * 1 to 500 characters, or one of the messages is redacted.
   * @example
   * await store.excludeMessages(thread.id, [oldAnswerId], { reason: 'superseded-by-regenerate' });
   */
  excludeMessages(threadId: string, messageIds: string[], options: ExcludeMessagesOptions): Promise<StoredMessage[]>;

  /**
   * Brings excluded messages back into the model's context. All the messages change, or none. Audited.
   *
   * @throws {NotFoundError} The thread or one of the messages is missing or another tenant's.
   * @throws {InvalidArgumentError} `messageIds` is not a non-empty array of message ids, or one of them is redacted.
   */
  includeMessages(threadId: string, messageIds: string[], options?: AuditOptions): Promise<StoredMessage[]>;

  /**
   * Pins a message: it is in the model's context on every step, whatever the budget selects. Pinning a pinned
   * message changes nothing.
   *
   * @throws {NotFoundError} The message is missing from the thread, or the thread is another tenant's.
   * @example
   * await store.pinMessage(thread.id, 'm-instructions');
   */
  pinMessage(threadId: string, messageId: string): Promise<StoredMessage>;

  /**
   * Unpins a message: it is in the model's context again only when the budget selects it.
   *
   * @throws {NotFoundError} The message is missing from the thread, or the thread is another tenant's.
   */
  unpinMessage(threadId: string, messageId: string): Promise<StoredMessage>;

  /**
   * One message by its `UIMessage.id`.
   *
   * @throws {NotFoundError} The thread (missing, another tenant's, soft-deleted) or the message is not found.
   */
  getMessage(threadId: string, messageId: string): Promise<StoredMessage>;

  /**
   * A page of a thread's messages, newest first, keyset on the sequence (never OFFSET): pass the page's
   * `nextCursor` as `before` for the next, older page.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `limit` is not an integer from 1 to 500, `before` is not a positive integer, or
   * `roles` is not a non-empty array of message roles.
   * @example
   * const { messages, nextCursor } = await store.listMessages(thread.id, { limit: 30 });
   */
  listMessages(threadId: string, options?: ListMessagesOptions): Promise<MessagePage>;

  /**
   * Full-text search over the text parts of the tenant's messages (reasoning and tool traffic are not indexed),
   * with web-search syntax (`"exact phrase"`, `or`, `-word`): any non-empty string is a valid query. Ranked, with
   * HTML snippets; deleted threads and messages are left out. The query is the value searched, so it is an argument.
   *
   * @throws {InvalidArgumentError} `query` is empty, longer than 1000 characters, or holds NUL or a lone surrogate;
   * `limit` is not an integer from 1 to 100; or `userId` is not a short string.
   * @throws {NotFoundError} `threadId` is not a uuid.
   * @example
   * const hits = await store.searchMessages('"return policy" -draft', { userId: 'u1' });
   */
  searchMessages(query: string, options?: SearchMessagesOptions): Promise<SearchHit[]>;

  /**
   * Redacts a message: the whole text, or the given spans, is replaced in its parts and metadata (spans also in the
   * thread's title and metadata, its runs' errors and metadata and its snapshots' JSON); its context state becomes
   * `redacted`, its `contentVersion` goes up by one, every summary covering it is wiped and marked stale, every
   * snapshot covering it marked stale, and an audit event records who and why (never what). The copies
   * `forkThread` made, in every thread of the fork family, are redacted the same way.
   *
   * @throws {NotFoundError} The thread (missing, another tenant's, soft-deleted) or the message is not found.
   * @throws {InvalidArgumentError} `spans` is not a non-empty array of non-empty strings, `actor` or `reason` is
   * empty, or `replacement` is longer than 1000 characters, holds NUL or a lone surrogate, or contains a span.
   * @example
   * await store.redactMessage(thread.id, 'm-7', { spans: [cardNumber], actor: 'support:42', reason: 'PCI' });
   */
  redactMessage(threadId: string, messageId: string, options: RedactMessageOptions): Promise<StoredMessage>;

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

  /**
   * What the context engine starts from: the newest valid snapshot, its summary, the newest valid summary, the
   * messages strictly after the snapshot's inclusive boundary (every state; the engine filters) and the pinned ones
   * before it, read in one repeatable-read transaction.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `maxTailMessages` is not an integer from 1 to 100,000.
   */
  loadContext(threadId: string, options?: LoadContextOptions): Promise<ContextView>;

  /**
   * Stores a summary artifact over an inclusive sequence range of the thread. Empty content is refused, so a
   * failed summarizer call can never write a summary.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} Empty content, a range outside the thread, a negative token count, an empty
   * `policyVersion`, or a `previousSummaryId` that is not a uuid.
   */
  writeSummary(threadId: string, summary: WriteSummaryInput): Promise<StoredSummary>;

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
  writeSnapshot(threadId: string, snapshot: WriteSnapshotInput): Promise<StoredSnapshot>;

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
  contextStore(threadId: string, options?: ContextStoreOptions): ContextStore;
}
