import type { ContextUIMessage } from './context-ui-message.js';
import type { StoredMessage, StoredSnapshot, StoredSummary, StoredThread } from './stored-rows.js';

/**
 * One row of the conversation log as the context engine needs it: the fields of {@link StoredMessage} it
 * reads, so the store's rows can be passed as they are. `pinned` may be left out (not pinned), and
 * `schemaVersion` too (the message is then migrated from version 1; the migrations are idempotent).
 * `contentVersion` (raised by the database on every change of parts; never lowered), when given, is handed back with
 * a summary written from the message (`NewSummary.sourceVersions`), so that a summary read from a message whose parts
 * changed since (a redaction, a finalize, any update) is refused. `partTokenCounts`, when given with a usable
 * `tokenCount`, are the per-part counts `countStoredPartTokens` makes: pruning then subtracts them instead of
 * tokenizing the parts it removes (counts that do not fit the message are ignored). `rowId` with
 * `contentVersion` lets a store's {@link ContextMessageCache} keep the message's converted form across requests;
 * `byteSize` is what it weighs there.
 */
export type ContextMessage = Pick<
  StoredMessage<ContextUIMessage>,
  'sequence' | 'message' | 'status' | 'contextState' | 'tokenCount' | 'tokenCounterId' | 'deletedAt'
> &
  Partial<
    Pick<
      StoredMessage<ContextUIMessage>,
      'pinned' | 'schemaVersion' | 'contentVersion' | 'rowId' | 'byteSize' | 'createdAt'
    >
  > & {
    /** Per-part text counts (`countStoredPartTokens`) summing to `tokenCount`, or null. @default null */
    partTokenCounts?: readonly number[] | null;
  };

/** A covered message as a summarizer read it: its sequence and its `contentVersion` at the time. */
export interface SummarySourceVersion {
  /** The message's sequence in the thread. */
  sequence: number;
  /** Its `contentVersion` when it was read (raised by the database on every change of parts; never lowered). */
  contentVersion: number;
}

/** A summary as the context engine needs it: the fields of {@link StoredSummary} it reads. */
export type ContextSummary = Pick<
  StoredSummary,
  'id' | 'fromSequence' | 'throughSequence' | 'content' | 'tokenCount' | 'policyVersion' | 'previousSummaryId' | 'stale'
>;

/** A snapshot as the context engine needs it: the fields of {@link StoredSnapshot} it reads. */
export type ContextSnapshot = Pick<
  StoredSnapshot,
  | 'id'
  | 'version'
  | 'throughSequence'
  | 'summaryId'
  | 'includedSequences'
  | 'pruned'
  | 'budget'
  | 'policyVersion'
  | 'messagesHash'
  | 'stepNumber'
>;

/** A summary to write: what the engine (or an application) gives the store. */
export interface NewSummary {
  /** The first sequence covered (inclusive), 1 or more. */
  fromSequence: number;
  /** The last sequence covered (inclusive), from `fromSequence` to the thread's last sequence. */
  throughSequence: number;
  /** The summary text; never empty (a failed summarizer call writes nothing). */
  content: string;
  /** The raw token count of `content`. */
  tokenCount: number;
  /** Which counter produced `tokenCount`. @default null */
  tokenCounterId?: string | null;
  /** The summarizer's id (for example the model id). @default null */
  summarizerModel?: string | null;
  /** The context policy version. */
  policyVersion: string;
  /** The summary this one extends; when it has become stale since it was read, the summary is refused. @default null */
  previousSummaryId?: string | null;
  /**
   * The covered messages as the summarizer read them. When any of them has a higher `contentVersion` at write
   * time (its parts changed after it was read: a redaction, a finalize, any update), the store writes nothing and
   * throws a `VersionConflictError`: the summary may repeat what a redaction removed, or miss what was added. The check and the insert are one atomic step (the Postgres
   * store locks the messages FOR SHARE, so a redaction in flight is waited for). The context engine always passes
   * them; an application writing its own summaries should. @default [] (nothing checked)
   */
  sourceVersions?: readonly SummarySourceVersion[];
}

/** A snapshot to write: what the engine (or an application) gives the store. */
export interface NewSnapshot {
  /** The version the writer read; the snapshot becomes `expectedVersion + 1`, or the store throws a `VersionConflictError`. */
  expectedVersion: number;
  /** See {@link StoredSnapshot.throughSequence}: from 0 to the thread's last sequence. */
  throughSequence: number;
  /** See {@link StoredSnapshot.summaryId}: one of the thread's summaries. @default null */
  summaryId?: string | null;
  /** See {@link StoredSnapshot.includedSequences}. */
  includedSequences: number[];
  /** See {@link StoredSnapshot.pruned}. @default [] */
  pruned?: unknown;
  /** See {@link StoredSnapshot.budget}. @default {} */
  budget?: unknown;
  /** See {@link StoredSnapshot.policyVersion}. */
  policyVersion: string;
  /** See {@link StoredSnapshot.messagesHash}. */
  messagesHash: string;
  /** See {@link StoredSnapshot.stepNumber}: a non-negative integer. @default null */
  stepNumber?: number | null;
}

/** One consistent read of what a context needs (seed 004's `load`). */
export interface LoadedContext {
  /** The newest snapshot that is not stale, or null. */
  snapshot: ContextSnapshot | null;
  /** The newest summary that is not stale (it may be newer than the snapshot's), or null. */
  latestSummary: ContextSummary | null;
  /** Every message strictly after the snapshot's boundary (0 without a snapshot), oldest first, in any state. */
  tail: ContextMessage[];
  /** Pinned messages at or before the snapshot's boundary, oldest first. */
  pinned: ContextMessage[];
  /** The snapshot version a new snapshot must expect (0 when the thread has none). */
  currentVersion: number;
}

/**
 * What the Postgres store's `TenantHistory.loadContext` returns: a {@link LoadedContext} with full rows, plus the
 * thread, the snapshot's own summary and whether the tail was cut.
 */
export interface LoadedThreadContext extends LoadedContext {
  /** The thread. */
  thread: StoredThread;
  /** The newest snapshot that is not stale, or null. */
  snapshot: StoredSnapshot | null;
  /** The snapshot's summary, when it has one and it is not stale. */
  summary: StoredSummary | null;
  /** The newest summary that is not stale (it may be newer than the snapshot's), or null. */
  latestSummary: StoredSummary | null;
  /** Messages strictly after the snapshot's inclusive boundary, oldest first (the newest `maxTailMessages`). */
  tail: StoredMessage[];
  /** Pinned messages at or before the snapshot's boundary, oldest first (they stay in every context). */
  pinned: StoredMessage[];
  /** True when older tail messages were left out by `maxTailMessages`. */
  tailTruncated: boolean;
}

/** A working-memory document: what the model keeps about a user (or a thread) across threads. */
export interface ContextWorkingMemory {
  id: string;
  scope: 'user' | 'thread';
  content: string;
  version: number;
}
/** One item recalled from another thread of the same user, for the newest user input. */
export interface ContextRecalledItem {
  id: string; // the recall entry's id, or `message:<message row id>` for a full-text-only hit
  sourceThreadId: string;
  sourceMessageId: string;
  sourceSequence: number;
  sourceContentVersion: number;
  role: 'user' | 'assistant';
  text: string;
  score: number;
  via: 'full-text' | 'vector' | 'both';
}
/** What `ContextStore.loadMemory` returns: the working memory and the items recalled across threads. */
export interface ContextMemory {
  workingMemory: ContextWorkingMemory | null;
  recalled: ContextRecalledItem[];
  recall: 'full-text' | 'hybrid';
}
/** The working memory as the `updateWorkingMemory` tool reads and writes it (one user's, or one thread's). */
export interface WorkingMemoryStore {
  getWorkingMemory(): Promise<ContextWorkingMemory | null>;
  updateWorkingMemory(input: { content: string; expectedVersion: number }): Promise<ContextWorkingMemory>;
}

/**
 * The persistence the context engine depends on, bound to one tenant and one thread. The in-memory
 * {@link createMemoryContextStore} implements it for tests; the Postgres store implements the same contract.
 */
export interface ContextStore {
  /** Reads the snapshot, the newest valid summary, the replay tail and the pinned messages in one consistent view. */
  loadContext(): Promise<LoadedContext>;
  /** Stores a summary artifact. Never called with empty content. */
  writeSummary(input: NewSummary): Promise<ContextSummary>;
  /**
   * Stores snapshot `expectedVersion + 1`. When another writer got there first it must write nothing and
   * throw a `VersionConflictError` (from `src/errors`): a snapshot is never overwritten. A `summaryId` that is not
   * one of the thread's summaries is refused with `NotFoundError`; one that has become stale makes the snapshot
   * stale (never returned by `loadContext`). A `throughSequence` below the newest not-stale snapshot's is refused
   * with `SnapshotBoundaryError` and nothing is written (a version conflict is reported first), also against a
   * concurrent writer: boundaries only advance.
   */
  writeSnapshot(input: NewSnapshot): Promise<ContextSnapshot>;
  /**
   * Optional: the working memory and the items recalled from the same user's other threads for `query` (the newest
   * user input), at most `limit` of them, best first. The engine puts them in the context as segments of their own.
   */
  loadMemory?(input: { query: string; limit: number }): Promise<ContextMemory>;
  /** Optional full-text search for relevant earlier messages (the memory step), best match first. */
  searchMessages?(input: { query: string; limit: number }): Promise<ContextMessage[]>;
  /**
   * Optional: where the engine keeps what it derives from a stored message (its model messages) between requests,
   * bound to this store's tenant and thread. Only messages with a `rowId` and a `contentVersion` are kept, under a
   * key of both, the status, the schema version and the role; a store that offers a cache must raise
   * `contentVersion` on every change of a message's parts (the Postgres store's database does).
   */
  messageCache?: ContextMessageCache;
}

/**
 * A bounded cache of values derived from stored messages, bound to one tenant and one thread
 * (`createContextMessageCache(...).scoped(...)`): one value per row id, for one version of the row. The values are
 * the engine's: it fills in a value's pieces (the row's model messages, its validation, its part kinds) as it first
 * needs them, and never changes one it filled in.
 */
export interface ContextMessageCache {
  /** The value stored for row `id` at `version`, or undefined (another version is held, or none; it may be evicted). */
  get(id: string, version: string): object | undefined;
  /** Stores `value` for row `id` at `version`, replacing what the row had; `bytes` is its weight against the bound. */
  set(id: string, version: string, value: object, bytes: number): void;
  /** Drops what row `id` has (a row that no longer reaches the model: deleted, excluded, redacted elsewhere). */
  delete(id: string): void;
  /**
   * Drops what row `id` has and refuses to store it again while the cache remembers the withdrawal (the last 4,096):
   * a redaction's, so that a request that read the row before it committed does not put its old text back.
   */
  withdraw(id: string): void;
}
