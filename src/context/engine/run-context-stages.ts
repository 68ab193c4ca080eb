import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextStore } from '../../model/context-store.js';
import { estimateSegments, type ContextSegment, type SummarySegment } from '../segments/context-segment.js';
import { findRelevantMemory } from '../stages/find-relevant-memory.js';
import type { ContextPruning } from '../stages/apply-context-pruning.js';
import { pruneContext } from '../stages/prune-context.js';
import type {
  PruneStageReport,
  SelectStageReport,
  TrimStageReport,
  MemoryStageReport,
  SummarizeStageReport,
  MemorySegmentsStageReport,
} from '../contracts/stage-reports.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import { shrinkNewestTurn, trimContext } from '../stages/trim-context.js';
import type { DroppedRound, TrimmedReasoning } from '../stages/shrink-newest-turn.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { ContextStageReport } from '../contracts/context-report.js';
import type { ContextSummarizer } from '../contracts/context-summarizer.js';
import { selectAndSummarize } from './select-and-summarize.js';
import { createLeadSegment, leadWithUserMessage, mayNeedLead } from '../stages/lead-with-user-message.js';
import { withSourceVersions } from './context-engine-state.js';
import { fitMemorySegments, setMemoryAside } from '../stages/fit-memory-segments.js';
import type { LoadedMemorySegments } from '../stages/load-memory-segments.js';

/** Options of {@link runContextStages}. */
export interface RunContextStagesOptions {
  /** The context to compact, in order (built from the store, or parsed from a step's messages). */
  segments: readonly ContextSegment[];
  /** The turns as they were before the previous cut was applied, for the summarizer. @default `segments` */
  original?: readonly ContextSegment[];
  /** Prices segments and counts changed messages. */
  measure: ContextMeasure;
  /** The budget for all messages: what is available for the history plus the current input. */
  messageBudget: number;
  /** The resolved policy. */
  policy: ContextPolicy;
  /** Writes summaries; without it, the turns that do not fit are trimmed. */
  summarizer: ContextSummarizer | undefined;
  /** Stores new summaries and searches for memory. */
  store: ContextStore;
  /** Whether to run the memory step (once per request, when the context is built from the store). */
  memory: boolean;
  /** The content versions of the loaded messages, passed with a new summary. @default none */
  contentVersions?: ReadonlyMap<number, number>;
  /**
   * Tokens the context stands for beyond `segments` (older turns a window left out, at least what they add): added
   * where the whole context is compared with the budget (pruning tool traffic, selecting). @default 0
   */
  outsideTokens?: number;
  /**
   * The most those tokens may be (`outsideTokens` is then the least): where a decision turns on the exact amount,
   * the stages decide with both, and `outsideDecides` says when the two differ. @default outsideTokens
   */
  outsideTokensAtMost?: number;
  /**
   * The working memory and recalled items loaded for this context (`loadMemorySegments`), added to those the
   * segments already hold; the history stages run without them. @default none
   */
  memoryItems?: LoadedMemorySegments | null;
}

/** The reports of the stages {@link runContextStages} ran. */
export interface ContextStageReports {
  /** Stage 5. */
  prune: PruneStageReport;
  /** Stage 6. */
  select: SelectStageReport;
  /** Stage 7. */
  summarize: SummarizeStageReport;
  /** The memory step, when it ran. */
  memory: MemoryStageReport | null;
  /** Stage 8, with the previews made before selection included. */
  trim: TrimStageReport;
  /** The working memory and recalled items, when there were any to fit. */
  memorySegments: MemorySegmentsStageReport | null;
}

/** The outcome of {@link runContextStages}. */
export interface ContextStagesResult {
  /** The final context, in order. */
  segments: ContextSegment[];
  /** What each stage did. */
  reports: ContextStageReports;
  /** Whether a new summary was written. */
  summaryCreated: boolean;
  /** The summary the context is built on (the new one, else the previous one), even when trimming dropped it. */
  activeSummary: SummarySegment | null;
  /** The prune stage's decision. */
  pruning: ContextPruning;
  /** Every preview made, before selection and by the final trim. */
  previews: ToolOutputPreview[];
  /** Stored messages whose reasoning the trims removed. */
  trimmedReasoning: TrimmedReasoning[];
  /** Stored rounds the trims dropped. */
  droppedRounds: DroppedRound[];
  /**
   * Whether a decision turned on where the tokens beyond the segments lie between `outsideTokens` and
   * `outsideTokensAtMost` (how much to prune; whether the newest turn and pinned messages, over the compaction's
   * target, are left whole because the context fits the budget): a window cannot tell what the whole thread gives.
   */
  outsideDecides: boolean;
}

/**
 * Runs the in-memory stages over a context: prune → shrink an oversized newest turn → select → summarize (or trim
 * when that fails) → memory → trim, over the history with the working memory and recalled items set aside, then
 * fits those into the room left (`fitMemorySegments`). Pure except for the summarizer and the store's `writeSummary` and
 * `searchMessages`, which it awaits.
 */
export async function runContextStages(options: RunContextStagesOptions): Promise<ContextStagesResult> {
  const { history, memory: carried } = setMemoryAside(options.segments);
  const stages = await runHistoryStages({ ...options, segments: history });
  const { measure, messageBudget, memoryItems = null } = options;
  const fitted = fitMemorySegments({ segments: stages.segments, carried, loaded: memoryItems, measure, messageBudget });
  return { ...stages, segments: fitted.segments, reports: { ...stages.reports, memorySegments: fitted.report } };
}

// The stages over the history alone (the working memory and recalled items set aside).
async function runHistoryStages({
  segments,
  original = segments,
  measure,
  messageBudget,
  policy,
  summarizer,
  store,
  memory,
  contentVersions = new Map(),
  outsideTokens = 0,
  outsideTokensAtMost = outsideTokens,
}: RunContextStagesOptions): Promise<ContextStagesResult> {
  // Over the budget, tool traffic goes oldest first down to the share of it a compaction keeps, as selecting does.
  const targetTokens = Math.floor(messageBudget * policy.summary.targetRatio);
  const overBudget = estimateSegments(segments, measure) + outsideTokens > messageBudget;
  // Both count what a window left out (`outsideTokens`) with the context.
  const fit = { measure, messageBudget, targetTokens, outsideTokens, outsideTokensAtMost };
  const preview = policy.toolOutputPreview;
  const pruned = pruneContext({ ...fit, preview, segments, policy: policy.prune });
  // A newest turn over the budget is shrunk first, to the share a compaction keeps: later steps keep its prefix.
  const previewed = shrinkNewestTurn({ ...fit, preview, segments: pruned.segments });
  const previousSummary = findSummary(previewed.segments);
  const summarized = await selectAndSummarize({
    original,
    pruned: previewed.segments,
    previousSummary,
    measure,
    messageBudget,
    policy,
    summarizer,
    store: withSourceVersions(store, contentVersions),
    outsideTokens,
    // Pruning changed older turns: the cut goes on down to the target (a newest round previewed alone does not).
    compacting: overBudget && pruned.report.removed.length > 0,
  });
  const recalled = memory ? await withRelevantMemory({ store, segments: summarized.segments, measure, policy }) : null;
  const selected = recalled?.segments ?? summarized.segments;
  const memoryReport = recalled?.report ?? null;
  // Room for the user message put before a pinned answer that would come first (see leadWithUserMessage).
  const lead = mayNeedLead(selected) ? createLeadSegment(measure) : undefined;
  const trimmed = trimContext({
    segments: selected,
    measure,
    messageBudget: messageBudget - (lead ? measure.estimate(lead.tokens) : 0),
    preview: policy.toolOutputPreview,
    earlierPreviews: [...pruned.previews, ...previewed.previews],
  });
  return {
    segments: leadWithUserMessage(trimmed.segments, lead),
    reports: {
      prune: pruned.report,
      select: summarized.select,
      summarize: summarized.summarize,
      memory: memoryReport,
      trim: {
        ...trimmed.report,
        removed: [...previewed.report.removed, ...trimmed.report.removed],
        previews: [...previewed.previews, ...trimmed.previews],
        tokensSaved: previewed.report.tokensSaved + trimmed.report.tokensSaved,
      },
      memorySegments: null,
    },
    summaryCreated: summarized.summaryCreated,
    activeSummary: findSummary(selected) ?? previousSummary,
    pruning: pruned.pruning,
    previews: [...pruned.previews, ...previewed.previews, ...trimmed.previews],
    trimmedReasoning: [...previewed.reasoning, ...trimmed.reasoning],
    droppedRounds: [...previewed.rounds, ...trimmed.rounds],
    outsideDecides: pruned.outsideDecides || previewed.outsideDecides,
  };
}

// The memory recalled for the newest input, after the summary (or first).
async function withRelevantMemory(
  input: Parameters<typeof findRelevantMemory>[0],
): Promise<{ segments: ContextSegment[]; report: MemoryStageReport }> {
  const found = await findRelevantMemory(input);
  if (!found.segment) return { segments: [...input.segments], report: found.report };
  const after = input.segments.findIndex((segment) => segment.kind === 'summary') + 1;
  const segments = [...input.segments.slice(0, after), found.segment, ...input.segments.slice(after)];
  return { segments, report: found.report };
}

/** The stage reports in the order they ran, as a `ContextReport` lists them. */
export function listStageReports(reports: ContextStageReports): ContextStageReport[] {
  return [
    reports.prune,
    reports.select,
    reports.summarize,
    ...(reports.memory ? [reports.memory] : []),
    reports.trim,
    ...(reports.memorySegments ? [reports.memorySegments] : []),
  ];
}

function findSummary(segments: readonly ContextSegment[]): SummarySegment | null {
  return (segments.find((segment) => segment.kind === 'summary') as SummarySegment | undefined) ?? null;
}
