import type { ContextUIMessage } from './context-ui-message.js';

/** The lifecycle of a stored message (DESIGN principle 5). */
export type StoredContextMessageStatus = 'pending' | 'streaming' | 'completed' | 'failed' | 'cancelled';

/** Whether a stored message may reach the model. */
export type StoredContextState = 'eligible' | 'excluded' | 'redacted';

/**
 * One row of the conversation log as the context engine needs it. The store's own message type is a
 * superset of this one, so its rows can be passed as they are.
 */
export interface StoredContextMessage {
  /** The message's place in the thread: 1, 2, 3…, gapless. */
  sequence: number;
  /** The stored `UIMessage`. */
  message: ContextUIMessage;
  /** Lifecycle state; only finished assistant messages reach the model (see the filter stage). */
  status: StoredContextMessageStatus;
  /** `eligible` messages reach the model; `excluded` and `redacted` ones never do. */
  contextState: StoredContextState;
  /** A pinned message is always in the context, whatever the budget trims. */
  pinned?: boolean;
  /**
   * The raw token count of the message written by {@link countStoredMessageTokens}, or null. Used as it is
   * when `tokenCounterId` matches the engine's {@link storedTokenCountId}; recounted otherwise.
   */
  tokenCount: number | null;
  /** Which counter and serialisation produced `tokenCount`. */
  tokenCounterId: string | null;
  /** Set when the message was soft-deleted; such a message never reaches the model. */
  deletedAt: Date | null;
}

/** A summary artifact: the content stands for every message in the inclusive range `[fromSequence, throughSequence]`. */
export interface StoredContextSummary {
  /** The summary's id. */
  id: string;
  /** The first sequence the summary covers (inclusive). */
  fromSequence: number;
  /** The last sequence the summary covers (inclusive). */
  throughSequence: number;
  /** The summary text, in the structured sections of {@link buildSummaryPrompt}. */
  content: string;
  /** The raw token count of `content`. */
  tokenCount: number;
  /** The context policy version that produced it. */
  policyVersion: string;
  /** The summary this one extends, or null for the first one. */
  previousSummaryId: string | null;
  /** Set by the store when a covered message is redacted; a stale summary is never used. */
  stale: boolean;
}

/** What the engine asks the store to write as a new summary. */
export interface NewContextSummary {
  /** The first sequence covered (inclusive). */
  fromSequence: number;
  /** The last sequence covered (inclusive). */
  throughSequence: number;
  /** The summary text; never empty (a failed summarizer call writes nothing). */
  content: string;
  /** The raw token count of `content`. */
  tokenCount: number;
  /** Which counter produced `tokenCount`. */
  tokenCounterId: string | null;
  /** The summarizer's id (for example the model id). */
  summarizerModel: string | null;
  /** The context policy version. */
  policyVersion: string;
  /** The summary this one extends. */
  previousSummaryId: string | null;
}

/** A versioned record of exactly what the model saw after a compaction (DESIGN principle 9). */
export interface StoredContextSnapshot {
  /** The snapshot's id. */
  id: string;
  /** Per-thread version: 1, 2, 3…. */
  version: number;
  /**
   * The inclusive compaction boundary: messages up to here are represented by the summary (or were trimmed
   * away); the replay tail starts strictly after it.
   */
  throughSequence: number;
  /** The summary placed in the context, or null. */
  summaryId: string | null;
  /** The stored sequences whose messages are in the context (tail and pinned), ascending. */
  includedSequences: number[];
  /** What pruning, trimming and previews did: a {@link ContextSnapshotPruning} (stored as JSON). */
  pruned: unknown;
  /** The budget breakdown at the time: a {@link ContextBudget} (stored as JSON). */
  budget: unknown;
  /** The context policy version. */
  policyVersion: string;
  /** {@link hashContextMessages} of the stored part of the context. */
  messagesHash: string;
}

/** What the engine asks the store to write as a new snapshot. */
export interface NewContextSnapshot {
  /** The version the writer read; the snapshot becomes `expectedVersion + 1`, or the store throws a `VersionConflictError`. */
  expectedVersion: number;
  /** See {@link StoredContextSnapshot.throughSequence}. */
  throughSequence: number;
  /** See {@link StoredContextSnapshot.summaryId}. */
  summaryId: string | null;
  /** See {@link StoredContextSnapshot.includedSequences}. */
  includedSequences: number[];
  /** See {@link StoredContextSnapshot.pruned}. */
  pruned: unknown;
  /** See {@link StoredContextSnapshot.budget}. */
  budget: unknown;
  /** See {@link StoredContextSnapshot.policyVersion}. */
  policyVersion: string;
  /** See {@link StoredContextSnapshot.messagesHash}. */
  messagesHash: string;
}

/** One consistent read of what a context needs (seed 004's `load`). */
export interface LoadedContext {
  /** The newest snapshot that is not stale, or null. */
  snapshot: StoredContextSnapshot | null;
  /** The newest summary that is not stale (it may be newer than the snapshot's), or null. */
  latestSummary: StoredContextSummary | null;
  /** Every message strictly after the snapshot's boundary (0 without a snapshot), oldest first, in any state. */
  tail: StoredContextMessage[];
  /** Pinned messages at or before the snapshot's boundary, oldest first. */
  pinned: StoredContextMessage[];
  /** The snapshot version a new snapshot must expect (0 when the thread has none). */
  currentVersion: number;
}

/**
 * The persistence the context engine depends on, bound to one tenant and one thread. The in-memory
 * {@link createMemoryContextStore} implements it for tests; the Postgres store implements the same contract.
 */
export interface ContextStore {
  /** Reads the snapshot, the newest valid summary, the replay tail and the pinned messages in one consistent view. */
  loadContext(): Promise<LoadedContext>;
  /** Stores a summary artifact. Never called with empty content. */
  writeSummary(input: NewContextSummary): Promise<StoredContextSummary>;
  /**
   * Stores snapshot `expectedVersion + 1`. When another writer got there first it must write nothing and
   * throw a `VersionConflictError` (from `src/errors`): a snapshot is never overwritten. A `summaryId` that is not
   * one of the thread's summaries is refused with `NotFoundError`; one that has become stale makes the snapshot
   * stale (never returned by `loadContext`).
   */
  writeSnapshot(input: NewContextSnapshot): Promise<StoredContextSnapshot>;
  /** Optional full-text search for relevant earlier messages (the memory step), best match first. */
  searchMessages?(input: { query: string; limit: number }): Promise<StoredContextMessage[]>;
}
