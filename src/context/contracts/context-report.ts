import type { ContextBudget } from './context-budget.js';
import type {
  ConvertStageReport,
  CarryStageReport,
  FilterStageReport,
  MemoryStageReport,
  MemorySegmentsStageReport,
  PruneStageReport,
  SelectStageReport,
  SummarizeStageReport,
  TrimStageReport,
  ValidateStageReport,
} from './stage-reports.js';

/** One stage's entry in a {@link ContextReport}. */
export type ContextStageReport =
  | ValidateStageReport
  | FilterStageReport
  | ConvertStageReport
  | CarryStageReport
  | MemoryStageReport
  | MemorySegmentsStageReport
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
