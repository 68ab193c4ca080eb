import type {
  CONTEXT_STATES,
  MESSAGE_ROLES,
  MESSAGE_STATUSES,
  RUN_STATUSES,
  StoredMessagePart,
  StoredMetadata,
} from '../schema/define-agent-tables.js';

/** Who wrote a message: one of the schema's {@link MESSAGE_ROLES}. */
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** The lifecycle of a stored message (DESIGN principle 5): one of the schema's {@link MESSAGE_STATUSES}. */
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Whether a stored message may reach the model: one of the schema's {@link CONTEXT_STATES}. */
export type ContextState = (typeof CONTEXT_STATES)[number];

/** The lifecycle of a run: one of the schema's {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The shape of an AI SDK `UIMessage` as the store sees it (no dependency on `ai`). */
export interface StorableMessage<METADATA = unknown> {
  /** The client's message id, unique per thread. */
  id: string;
  /** Who wrote the message. */
  role: MessageRole;
  /** The message's parts, in order, as the AI SDK makes them. */
  parts: StoredMessagePart[];
  /** Application metadata (usage, timestamps, …). */
  metadata?: METADATA;
}

/** What `appendMessage` accepts: a {@link StorableMessage} whose parts may be readonly (written `as const`). */
export interface AppendableMessage<METADATA = unknown> extends Omit<StorableMessage<METADATA>, 'parts'> {
  /** The message's parts, in order; a readonly array is accepted and never changed. */
  parts: readonly StoredMessagePart[];
}

/** A conversation. */
export interface StoredThread {
  /** The thread's id (a uuid). */
  id: string;
  /** The owner or end user of the thread, in the application's own id format, or null. */
  userId: string | null;
  /** A display title, or null. */
  title: string | null;
  /** Application metadata (a JSON object). */
  metadata: StoredMetadata;
  /** How many messages the thread has had: the last sequence handed out. */
  messageCount: number;
  /** When the newest message was appended, or when the thread was created: the thread list's order. */
  lastMessageAt: Date;
  /** The thread this one was forked from, or null (a fork outlives its parent). */
  parentThreadId: string | null;
  /** The last sequence of the parent that the fork copied, or null for a thread that is not a fork. */
  forkedAtSequence: number | null;
  /** When the thread was created. */
  createdAt: Date;
  /** When the thread row last changed (title, metadata, soft deletion). */
  updatedAt: Date;
  /** Set when the thread was soft-deleted; such a thread is not found by reads. */
  deletedAt: Date | null;
}

/** One stored `UIMessage` with its place in the thread and its lifecycle. */
export interface StoredMessage<UI_MESSAGE extends AppendableMessage = StorableMessage> {
  /** The row id (a uuid), distinct from the client's `message.id`. */
  rowId: string;
  /** The thread the message belongs to. */
  threadId: string;
  /** The message's place in the thread: 1, 2, 3…, gapless. */
  sequence: number;
  /** The `UIMessage` exactly as the client sent it (id, role, parts, metadata). */
  message: UI_MESSAGE;
  /** Lifecycle state; only finished assistant messages reach the model (see the context engine's filter stage). */
  status: MessageStatus;
  /** `eligible` messages reach the model; `excluded` and `redacted` ones never do. */
  contextState: ContextState;
  /** Why the message was excluded (for example `superseded-by-edit`), or null. */
  exclusionReason: string | null;
  /** A pinned message is always in the context, whatever the budget trims. */
  pinned: boolean;
  /** The run that produced the message, or null. */
  runId: string | null;
  /** The client's idempotency key of the append that wrote the message, or null. */
  clientRequestId: string | null;
  /** The size of the parts and metadata, serialized, in bytes. */
  byteSize: number;
  /**
   * The raw token count of the parts, without per-model factors or overheads, written by
   * `countStoredMessageTokens`, or null. The context engine uses it as it is when `tokenCounterId` matches its
   * own `storedTokenCountId`, and recounts otherwise.
   */
  tokenCount: number | null;
  /** Which counter and serialisation produced `tokenCount`, or null. */
  tokenCounterId: string | null;
  /**
   * The raw count of each part of the model messages the message converts to (`countStoredPartTokens`), summing to
   * `tokenCount`, written with it; or null (while streaming, with a counter whose counts are not integers, on a
   * row migrated on read). The context engine subtracts them when it prunes a part
   * instead of tokenizing it; it ignores counts that do not sum to `tokenCount` or do not fit the message.
   */
  partTokenCounts: number[] | null;
  /**
   * The version of the message's parts: 1 as appended, raised by the database on every change of parts (a
   * checkpoint, a finalize, a reopen, a redaction, any `UPDATE`: the database's trigger); never lowered.
   * Two reads of a row with the same `contentVersion` have the same parts.
   */
  contentVersion: number;
  /**
   * The message-shape version of `message` as returned: reads migrate older rows, so this is always
   * `CURRENT_MESSAGE_SCHEMA_VERSION` (2) unless the row was written by a newer release. `storedSchemaVersion` is
   * the version the row was written with: a stored row is never rewritten to another shape, so the log keeps what
   * was written.
   */
  schemaVersion: number;
  /** The message-shape version in the row (see `schemaVersion`); below it, the row was migrated on read. */
  storedSchemaVersion: number;
  /** While pending or streaming: when the writer's lease runs out and the message is recovered as failed. */
  leaseExpiresAt: Date | null;
  /** When the message was appended. */
  createdAt: Date;
  /** When the row last changed. */
  updatedAt: Date;
  /** When the message reached a final status, or null. */
  completedAt: Date | null;
  /** When the message was redacted, or null. */
  redactedAt: Date | null;
  /** Set when the message was soft-deleted; such a message never reaches the model. */
  deletedAt: Date | null;
}

/** Token usage of a run, as the AI SDK reports it. */
export interface RunUsage {
  /** Prompt tokens. */
  inputTokens?: number;
  /** Completion tokens. */
  outputTokens?: number;
  /** Reasoning tokens (a part of `outputTokens` for providers that report them). */
  reasoningTokens?: number;
  /** Prompt tokens read from the provider's cache. */
  cachedInputTokens?: number;
}

/** One model invocation loop. */
export interface StoredRun {
  /** The run's id (a uuid). */
  id: string;
  /** The thread the run belongs to. */
  threadId: string;
  /** Lifecycle state. */
  status: RunStatus;
  /** The model provider (for example `openai`), or null. */
  provider: string | null;
  /** The model id, or null. */
  model: string | null;
  /** See {@link RunUsage.inputTokens}; null until reported. */
  inputTokens: number | null;
  /** See {@link RunUsage.outputTokens}; null until reported. */
  outputTokens: number | null;
  /** See {@link RunUsage.reasoningTokens}; null until reported. */
  reasoningTokens: number | null;
  /** See {@link RunUsage.cachedInputTokens}; null until reported. */
  cachedInputTokens: number | null;
  /** What made the run fail (a JSON object), or null. */
  error: StoredMetadata | null;
  /** Why the model's last step ended (`stop`, `length`, `tool-calls`, `error`, …), or null. */
  finishReason: string | null;
  /** Application metadata (a JSON object). */
  metadata: StoredMetadata;
  /** When the run started. */
  startedAt: Date;
  /** When the run finished or failed, or null while it runs. */
  finishedAt: Date | null;
}

/** A summary artifact: the content stands for every message in the inclusive range `[fromSequence, throughSequence]`. */
export interface StoredSummary {
  /** The summary's id. */
  id: string;
  /** The thread the summary belongs to. */
  threadId: string;
  /** The first sequence the summary covers (inclusive). */
  fromSequence: number;
  /** The last sequence the summary covers (inclusive). */
  throughSequence: number;
  /** The summary text, in the structured sections of the context engine's `buildSummaryPrompt`. */
  content: string;
  /** The raw token count of `content`. */
  tokenCount: number;
  /** Which counter produced `tokenCount`, or null. */
  tokenCounterId: string | null;
  /** The summarizer's id (for example the model id), or null. */
  summarizerModel: string | null;
  /** The context policy version that produced it. */
  policyVersion: string;
  /** The summary this one extends, or null for the first one. */
  previousSummaryId: string | null;
  /** Set by the store when a covered message is redacted; a stale summary is never used. */
  stale: boolean;
  /** When the summary was written. */
  createdAt: Date;
}

/** A versioned record of exactly what the model saw after a compaction (DESIGN principle 9). */
export interface StoredSnapshot {
  /** The snapshot's id. */
  id: string;
  /** The thread the snapshot belongs to. */
  threadId: string;
  /** Per-thread version: 1, 2, 3…; written with an expected version, never overwritten. */
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
  /** What pruning, trimming and previews did: a `ContextSnapshotPruning` (stored as JSON). */
  pruned: unknown;
  /** The budget breakdown at the time: a `ContextBudget` (stored as JSON). */
  budget: unknown;
  /** The context policy version. */
  policyVersion: string;
  /** `hashContextMessages` of the stored part of the context, so a rebuild can be checked against what the model saw. */
  messagesHash: string;
  /** The step of the model call it was written for (0 = the first; `prepareStep`'s `stepNumber`), or null. */
  stepNumber: number | null;
  /** Set when a message it includes, or its summary, was redacted; a stale snapshot is never loaded. */
  stale: boolean;
  /** When the snapshot was written. */
  createdAt: Date;
}

export type { StoredMessagePart, StoredMetadata };
