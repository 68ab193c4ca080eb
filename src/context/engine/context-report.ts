import type { ContextBudget } from './context-budget.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import type { ConvertStageReport } from '../stages/convert-to-context-segments.js';
import type { FilterStageReport } from '../stages/filter-stored-messages.js';
import type { PruneStageReport } from '../stages/prune-context.js';
import type { SelectStageReport } from '../stages/select-context.js';
import type { TrimStageReport } from '../stages/trim-context.js';
import type { ValidateStageReport } from '../stages/validate-stored-messages.js';

/** What the memory step did. */
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

/** What the summarize stage did. */
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

/** One stage's entry in a {@link ContextReport}. */
export type ContextStageReport =
  | ValidateStageReport
  | FilterStageReport
  | ConvertStageReport
  | MemoryStageReport
  | PruneStageReport
  | SelectStageReport
  | SummarizeStageReport
  | TrimStageReport;

/** What happened to the snapshot. */
export interface ContextSnapshotReport {
  /**
   * `written`: compaction changed the context and a new version was stored; `unchanged`: compaction ran but the
   * context equals the latest snapshot; `not-needed`: nothing was compacted; `conflict`: a concurrent writer
   * stored that version first (reported only with `snapshotConflicts: 'report'`).
   */
  status: 'written' | 'unchanged' | 'not-needed' | 'conflict';
  /** The version written, or the latest known one. */
  version: number | null;
  /** The inclusive boundary of the snapshot written. */
  throughSequence: number | null;
  /** The hash of the stored part of the context, when it was computed. */
  messagesHash: string | null;
}

/**
 * What the context engine did for one request or step: the budget breakdown and every stage's removals.
 * Plain JSON, to log or to draw.
 */
export interface ContextReport {
  /** What built the context. */
  trigger: 'initial-messages' | 'prepare-step';
  /** The step number, for `prepare-step`. */
  stepNumber: number | null;
  /** Whether the messages differ from the input (`prepare-step` returns `undefined` when false). */
  changed: boolean;
  /** Model messages in the final context. */
  messageCount: number;
  /** The estimated prompt: instructions, tool definitions and messages. */
  estimatedTokens: number;
  /** The budget breakdown. */
  budget: ContextBudget;
  /**
   * The stages, in order; empty for a step given the very messages the engine last returned, with instructions of
   * the same size (calibrated and not), the same calibration and no usage to learn from: such a step is not
   * compacted again.
   */
  stages: ContextStageReport[];
  /** The snapshot. */
  snapshot: ContextSnapshotReport;
  /** The calibration in force and the observation that updated it. */
  calibration: { factor: number; observedInputTokens: number | null; estimatedInputTokens: number | null };
  /** Wall time spent, in milliseconds (excluding nothing: store and summarizer calls included). */
  durationMs: number;
}
