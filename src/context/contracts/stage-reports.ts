import type { PartMigration } from '../../model/message-shape-migrations.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import type { ToolOutputPreview } from './tool-output-preview.js';

// What each stage reports, in the order the stages run: the entries of `ContextReport.stages`. They live here, not
// in the stages' files, because the report is the engine's promise to its caller (plain JSON, to log or to draw) and
// the engine and the stages both build it.

/** What the validate stage (`validateStoredMessages`) did. */
export interface ValidateStageReport {
  /** The stage's tag. */
  stage: 'validate';
  /** Messages and parts left out because they are malformed. */
  removed: ContextRemoval[];
  /** Parts rewritten from an older `UIMessage` schema. */
  migrated: Array<{ sequence: number; migration: PartMigration }>;
  /** Stored tokens of what was removed. */
  tokensSaved: number;
}

/** A tool part that the filter closed with an explicit error result. */
export interface ClosedToolCall {
  /** The message the tool part is in. */
  sequence: number;
  /** The call's id. */
  toolCallId: string;
  /** The state it was left in. */
  previousState: string;
}

/** What the filter stage (`filterStoredMessages`) did. */
export interface FilterStageReport {
  /** The stage's tag. */
  stage: 'filter';
  /** Messages left out: deleted, excluded, redacted, unfinished or system messages. */
  removed: ContextRemoval[];
  /** Incomplete tool calls turned into explicit error results (never dropped silently). */
  closedToolCalls: ClosedToolCall[];
  /** Stored tokens of what was removed. */
  tokensSaved: number;
}

/** What the convert stage (`convertToContextSegments`) did. */
export interface ConvertStageReport {
  /** The stage's tag. */
  stage: 'convert';
  /** Stored messages that produced no model message (only sources, step markers or data parts). */
  removed: ContextRemoval[];
  /** How many model messages were produced. */
  messages: number;
  /** Sequences whose stored token count was used as it is. */
  storedCounts: number;
  /** Sequences that had to be tokenized (no stored count, another counter, or changed by an earlier stage). */
  countedSequences: number[];
  /** Always 0: conversion removes nothing that costs tokens. */
  tokensSaved: number;
}

/**
 * What the carry stage (`carryPreviousCut`) did: whether the request starts from the cut the newest snapshot
 * records, and if not, why (`no-snapshot`, or one written with another policy version, summary or budget).
 */
export interface CarryStageReport {
  /** The stage's tag. */
  stage: 'carry';
  /** `previous-cut` when the snapshot's cut was applied; otherwise why not (`off`: the policy's `startFrom`). */
  carried: 'previous-cut' | 'off' | 'no-snapshot' | 'policy-changed' | 'summary-changed' | 'budget-changed';
  /** The snapshot's version, or null without one. */
  snapshotVersion: number | null;
  /** Reasoning, tool traffic and empty messages removed again, per segment. */
  removed: ContextRemoval[];
  /** Estimated tokens the cut saved (its reasoning, tool traffic, trims and previews). */
  tokensSaved: number;
}

/** What the prune stage (`pruneContext`) did. */
export interface PruneStageReport {
  /** The stage's tag. */
  stage: 'prune';
  /** Reasoning, tool traffic and empty messages removed, per segment. */
  removed: ContextRemoval[];
  /** Whether old tool traffic was pruned this time. */
  toolTraffic: 'pruned' | 'kept';
  /** Estimated tokens saved. */
  tokensSaved: number;
}

/** What the select stage (`selectContext`) did. */
export interface SelectStageReport {
  /** The stage's tag. */
  stage: 'select';
  /** Segments of the older turns that did not fit (to be summarized, or trimmed). */
  removed: ContextRemoval[];
  /** Turns kept. */
  keptTurns: number;
  /** Turns set aside. */
  overflowTurns: number;
  /** Estimated tokens set aside. */
  tokensSaved: number;
}

/** What the summarize stage (`summarizeContext`, run by the engine's `selectAndSummarize`) did. */
export interface SummarizeStageReport {
  /** The stage's tag. */
  stage: 'summarize';
  /**
   * `not-needed`: no summary and everything fits; `reused`: the stored summary was used as it is; `created`: a
   * new summary was written; `failed`: the summarizer threw, returned nothing or timed out, nothing was written
   * and the context was trimmed instead; `skipped`: turns did not fit but there is no summarizer (or they are not
   * stored yet), so they were trimmed.
   */
  status: 'not-needed' | 'reused' | 'created' | 'failed' | 'skipped';
  /** The summary in the context afterwards, if any. */
  summaryId: string | null;
  /** Its inclusive range. */
  fromSequence: number | null;
  /** Its inclusive range. */
  throughSequence: number | null;
  /** Summarizer calls made. */
  rounds: number;
  /** Why it failed or was skipped. */
  error: string | null;
  /** The turns folded into the new summary. */
  removed: ContextRemoval[];
  /** Estimated tokens of the folded turns minus the summary's growth. */
  tokensSaved: number;
}

/** What the memory step (`findRelevantMemory`) did. */
export interface MemoryStageReport {
  /** The stage's tag. */
  stage: 'memory';
  /** `off` by policy; `unavailable` when the store cannot search; `none` when nothing relevant was found. */
  status: 'off' | 'unavailable' | 'none' | 'found';
  /** The sequences quoted in the memory message. */
  sequences: number[];
  /** Always empty: the memory step adds, it does not remove. */
  removed: ContextRemoval[];
  /** Always 0. */
  tokensSaved: number;
}

/** One working-memory document or recalled item as a {@link MemorySegmentsStageReport} lists it. */
export interface MemorySegmentEntry {
  /** The working memory's id, or the recalled item's. */
  id: string;
  /** The working memory's version, or the recalled item's `sourceContentVersion`. */
  version: number;
  /** For a recalled item: its source thread and message, its score and how it was found. */
  source?: {
    threadId: string;
    messageId: string;
    sequence: number;
    score: number;
    via: 'full-text' | 'vector' | 'both';
  };
  /** Its estimated tokens. */
  tokens: number;
  /** Whether it is in the context; false when it did not fit (the recall limit, or the budget). */
  included: boolean;
}

/** What the memory-segments stage (`fitMemorySegments`) did with the working memory and the recalled items. */
export interface MemorySegmentsStageReport {
  /** The stage's tag. */
  stage: 'memory-segments';
  /** How the store recalled (`full-text`, `hybrid`), or null when it was not asked this time (a later step). */
  recall: 'full-text' | 'hybrid' | null;
  /** The working memory, or null when there is none. */
  workingMemory: MemorySegmentEntry | null;
  /** The recalled items, best first. */
  recalled: MemorySegmentEntry[];
  /** The working memory and recalled items left out for the budget (never a turn). */
  removed: ContextRemoval[];
  /** Estimated tokens of what was left out. */
  tokensSaved: number;
}

/** What the trim stage (`trimContext`, and `shrinkNewestTurn` before selection) did. */
export interface TrimStageReport {
  /** The stage's tag. */
  stage: 'trim';
  /** Whole turns, rounds, reasoning, the memory or the summary dropped, and payloads previewed. */
  removed: ContextRemoval[];
  /** The previews made. */
  previews: ToolOutputPreview[];
  /** Estimated tokens still over the budget when nothing more can be cut (0 when it fits). */
  overBudgetTokens: number;
  /** Estimated tokens saved. */
  tokensSaved: number;
}
