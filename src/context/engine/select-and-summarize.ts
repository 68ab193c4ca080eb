import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextStore } from '../../model/context-store.js';
import {
  groupTurns,
  type ContextSegment,
  type MessageSegment,
  type SummarySegment,
} from '../segments/context-segment.js';
import { selectContext } from '../stages/select-context.js';
import type { SelectStageReport, SummarizeStageReport } from '../contracts/stage-reports.js';
import { summarizeContext, type SummarizeContextResult } from '../stages/summarize-context.js';
import { trimContext } from '../stages/trim-context.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { ContextSummarizer } from '../contracts/context-summarizer.js';

/** Options of {@link selectAndSummarize}. */
export interface SelectAndSummarizeOptions {
  /** The context before pruning: the summarizer reads the turns as they were. */
  original: readonly ContextSegment[];
  /** The pruned (and previewed) context to select from. */
  pruned: readonly ContextSegment[];
  /** The summary in the pruned context, if any. */
  previousSummary: SummarySegment | null;
  /** Prices segments. */
  measure: ContextMeasure;
  /** The budget for all messages. */
  messageBudget: number;
  /** `summary` sizes, the policy version stored with a summary, and the previews the trim may make. */
  policy: Pick<ContextPolicy, 'summary' | 'version' | 'toolOutputPreview'>;
  /** Writes summaries; without it, the turns that do not fit are trimmed. */
  summarizer: ContextSummarizer | undefined;
  /** Stores a new summary. */
  store: Pick<ContextStore, 'writeSummary'>;
  /** Tokens the context stands for beyond `pruned`, counted against `messageBudget` (see `selectContext`). */
  outsideTokens?: number;
  /** Whether the context was over the budget before pruning, and pruning changed it (see `selectContext`). @default false */
  compacting?: boolean;
}

/** The outcome of {@link selectAndSummarize}. */
export interface SelectAndSummarizeResult {
  /** The selected context, with the new summary in place of the previous one. */
  segments: ContextSegment[];
  /** The select stage's report (of the fallback selection when summarizing failed). */
  select: SelectStageReport;
  /** The summarize stage's report. */
  summarize: SummarizeStageReport;
  /** Whether a new summary was written. */
  summaryCreated: boolean;
}

/**
 * Stages 6 and 7: selects the newest turns that fit below the target and folds the older ones into the running
 * summary. When summarizing fails, it selects again against the whole budget and reports the turns as trimmed.
 */
export async function selectAndSummarize(options: SelectAndSummarizeOptions): Promise<SelectAndSummarizeResult> {
  const { pruned, previousSummary, measure, messageBudget, policy, summarizer } = options;
  // Compact to `targetRatio`: the next steps fit without compacting again, and the prefix stays for prompt caches.
  const trimTarget = Math.floor(messageBudget * policy.summary.targetRatio);
  const target = summarizer ? trimTarget - policy.summary.reserveTokens : trimTarget;
  const selected = selectContext({
    segments: pruned,
    measure,
    messageBudget,
    targetTokens: target,
    overflowReason: summarizer ? 'turn-summarized' : 'turn-trimmed',
    preview: policy.toolOutputPreview,
    outsideTokens: options.outsideTokens,
    compacting: options.compacting,
  });
  const unchanged: SummarizeStageReport = {
    stage: 'summarize',
    status: previousSummary ? 'reused' : 'not-needed',
    summaryId: previousSummary?.summaryId ?? null,
    fromSequence: previousSummary?.fromSequence ?? null,
    throughSequence: previousSummary?.throughSequence ?? null,
    rounds: 0,
    error: null,
    removed: [],
    tokensSaved: 0,
  };
  if (selected.overflow.length === 0)
    return { segments: selected.segments, select: selected.report, summarize: unchanged, summaryCreated: false };
  // The trim that follows keeps a summary only if it fits next to the newest turn: check before writing it.
  const kept = selected.segments.filter((segment) => segment !== previousSummary);
  const fits = (summary: SummarySegment) =>
    trimContext({
      segments: [summary, ...kept],
      measure,
      messageBudget,
      preview: policy.toolOutputPreview,
    }).segments.some((segment) => segment.kind === 'summary');
  const outcome = await summarizeOverflow(options, selected.overflow, fits);
  if (outcome.status === 'created') {
    const summary = outcome.summary;
    const growth = measure.estimate(summary.tokens) - (previousSummary ? measure.estimate(previousSummary.tokens) : 0);
    return {
      segments: previousSummary
        ? selected.segments.map((segment) => (segment === previousSummary ? summary : segment))
        : [summary, ...selected.segments],
      // The folded turns are the summarize stage's removals; listing them under select too would count them twice.
      select: { ...selected.report, removed: [], tokensSaved: 0 },
      summarize: {
        stage: 'summarize',
        status: 'created',
        summaryId: summary.summaryId,
        fromSequence: summary.fromSequence,
        throughSequence: summary.throughSequence,
        rounds: outcome.rounds,
        error: null,
        removed: selected.report.removed,
        tokensSaved: selected.report.tokensSaved - growth,
      },
      summaryCreated: true,
    };
  }
  const summarize: SummarizeStageReport = {
    ...unchanged,
    status: summarizer ? 'failed' : 'skipped',
    rounds: outcome.rounds,
    error: outcome.error,
  };
  if (!summarizer) return { segments: selected.segments, select: selected.report, summarize, summaryCreated: false };
  // Fall back to trimming: select again against the whole budget, reporting the turns as trimmed.
  const fallback = selectContext({
    segments: pruned,
    measure,
    messageBudget,
    targetTokens: trimTarget,
    overflowReason: 'turn-trimmed',
    preview: policy.toolOutputPreview,
    outsideTokens: options.outsideTokens,
  });
  return { segments: fallback.segments, select: fallback.report, summarize, summaryCreated: false };
}

async function summarizeOverflow(
  { original, pruned, previousSummary, measure, policy, summarizer, store }: SelectAndSummarizeOptions,
  selectedOverflow: readonly MessageSegment[][],
  fits: (summary: SummarySegment) => boolean,
): Promise<SummarizeContextResult> {
  if (!summarizer) return { status: 'failed', error: 'no summarizer is configured', rounds: 0 };
  const overflow = asTheyWere(original, pruned, selectedOverflow);
  return summarizeContext({
    overflow,
    previous: previousSummary,
    summarizer,
    store,
    measure,
    policy: policy.summary,
    policyVersion: policy.version,
    fits,
  });
}

/**
 * The turns set aside as they were before pruning, so that dropped tool traffic is not lost: each segment as it was,
 * and the stored messages of the turn that pruning or a carried cut left out whole (an answer whose traffic or rounds
 * all went), in their place.
 */
function asTheyWere(
  original: readonly ContextSegment[],
  pruned: readonly ContextSegment[],
  overflow: readonly MessageSegment[][],
): MessageSegment[][] {
  const bySequence = new Map<number, MessageSegment>();
  const turnOf = new Map<number, number>();
  const turns = groupTurns(original);
  turns.forEach((turn, index) => {
    for (const position of turn.indices) {
      const segment = original[position] as MessageSegment;
      if (segment.sequence === null) continue;
      bySequence.set(segment.sequence, segment);
      turnOf.set(segment.sequence, index);
    }
  });
  const kept = new Set<number>();
  for (const segment of pruned) if (segment.kind === 'message' && segment.sequence !== null) kept.add(segment.sequence);
  return overflow.map((turn) => {
    const asStored = turn.map(
      (segment) => (segment.sequence !== null ? bySequence.get(segment.sequence) : undefined) ?? segment,
    );
    // Only a turn of stored messages is completed from the log's turns (a step's own messages are as they are).
    if (turn.some((segment) => segment.sequence === null || !turnOf.has(segment.sequence))) return asStored;
    const sequences = new Set(turn.map((segment) => segment.sequence as number));
    const touched = [...new Set(turn.map((segment) => turnOf.get(segment.sequence as number)!))].sort((a, b) => a - b);
    const left = touched.flatMap((index) =>
      turns[index]!.indices.flatMap((position) => {
        const segment = original[position] as MessageSegment;
        const sequence = segment.sequence;
        return sequence !== null && !sequences.has(sequence) && !kept.has(sequence) ? [segment] : [];
      }),
    );
    if (left.length === 0) return asStored;
    return [...asStored, ...left].sort((a, b) => (a.sequence as number) - (b.sequence as number));
  });
}
