import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import type { StorableMessage } from '../store/validate-message.js';

export type MessageRole = StorableMessage['role'];
export type MessageStatus = 'pending' | 'streaming' | 'completed' | 'failed' | 'cancelled';
export type ContextState = 'eligible' | 'excluded' | 'redacted';
export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** A conversation. */
export interface StoredThread {
  id: string;
  userId: string | null;
  title: string | null;
  metadata: StoredMetadata;
  /** How many messages the thread has had: the last sequence handed out. */
  messageCount: number;
  lastMessageAt: Date;
  parentThreadId: string | null;
  forkedAtSequence: number | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/** One stored `UIMessage` with its place in the thread and its lifecycle. */
export interface StoredMessage<UI_MESSAGE extends StorableMessage = StorableMessage> {
  /** The row id (a uuid), distinct from the client's `message.id`. */
  rowId: string;
  threadId: string;
  /** 1, 2, 3… per thread, gapless. */
  sequence: number;
  /** The `UIMessage` exactly as the client sent it (id, role, parts, metadata). */
  message: UI_MESSAGE;
  status: MessageStatus;
  contextState: ContextState;
  exclusionReason: string | null;
  pinned: boolean;
  runId: string | null;
  clientRequestId: string | null;
  byteSize: number;
  tokenCount: number | null;
  tokenCounterId: string | null;
  contentVersion: number;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  redactedAt: Date | null;
  deletedAt: Date | null;
}

/** Token usage of a run, as the AI SDK reports it. */
export interface RunUsage {
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

/** One model invocation loop. */
export interface StoredRun {
  id: string;
  threadId: string;
  status: RunStatus;
  provider: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  cachedInputTokens: number | null;
  error: StoredMetadata | null;
  metadata: StoredMetadata;
  startedAt: Date;
  finishedAt: Date | null;
}

/** A summary artifact covering an inclusive sequence range. */
export interface StoredSummary {
  id: string;
  threadId: string;
  fromSequence: number;
  throughSequence: number;
  content: string;
  tokenCount: number;
  tokenCounterId: string | null;
  summarizerModel: string | null;
  policyVersion: string;
  previousSummaryId: string | null;
  stale: boolean;
  createdAt: Date;
}

/** A versioned record of exactly what the model saw after a compaction. */
export interface StoredSnapshot {
  id: string;
  threadId: string;
  version: number;
  throughSequence: number;
  summaryId: string | null;
  includedSequences: number[];
  pruned: unknown;
  budget: unknown;
  policyVersion: string;
  messagesHash: string;
  stale: boolean;
  createdAt: Date;
}

export type { StoredMessagePart, StoredMetadata };
