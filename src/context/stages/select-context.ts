import type { ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import { createTrimmer } from './create-trimmer.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { SelectStageReport } from '../contracts/stage-reports.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import {
  estimateSegments,
  groupTurns,
  hasUnfinishedToolWork,
  type ContextSegment,
  type MessageSegment,
} from '../segments/context-segment.js';

/** Options of {@link selectContext}. */
export interface SelectContextOptions {
  /** The pruned context, in order. */
  segments: readonly ContextSegment[];
  /** Prices segments. */
  measure: ContextMeasure;
  /** The budget for all messages. When the context fits it, nothing is selected away. */
  messageBudget: number;
  /**
   * The size to select down to when it does not fit: lower than `messageBudget` to leave room for a new
   * summary and for the next turns (see `ContextSummaryPolicy.targetRatio`).
   * @default messageBudget
   */
  targetTokens?: number;
  /**
   * How set-aside turns are reported: `turn-summarized` when a summarizer will fold them, else `turn-trimmed`.
   * @default 'turn-trimmed'
   */
  overflowReason?: 'turn-summarized' | 'turn-trimmed';
  /**
   * With the preview sizes, a turn that does not fit whole is still kept when it fits once shrunk as the trim
   * shrinks an older turn (reasoning removed, tool inputs and outputs and texts previewed down to
   * `minimumTokens`, files left out), counted at that size; the trim then shrinks it. Without, it is set aside.
   */
  preview?: ContextToolOutputPreviewPolicy;
  /** Tokens the context stands for beyond `segments`, counted against `messageBudget`. @default 0 */
  outsideTokens?: number;
  /**
   * Whether the context was over `messageBudget` before pruning and pruning changed older turns: it is then
   * selected down to `targetTokens` even if pruning alone made it fit, so that the next steps do not compact again
   * at once. @default false
   */
  compacting?: boolean;
}

/**
 * Stage 6: when the context does not fit, keeps the newest whole turns that fit `targetTokens`, plus (always)
 * the summary, the memory, pinned messages, the newest turn and any turn with unfinished tool work or a
 * pending approval. The older turns are set aside as `overflow` (oldest first, pinned segments excluded) for
 * the summarizer. Turns are kept newest first and contiguously: once a turn does not fit, no older one is
 * kept (with `preview`, a turn fits when it fits once shrunk). Idempotent.
 */
export function selectContext({
  segments,
  measure,
  messageBudget,
  targetTokens = messageBudget,
  overflowReason = 'turn-trimmed',
  preview,
  outsideTokens = 0,
  compacting = false,
}: SelectContextOptions): { segments: ContextSegment[]; overflow: MessageSegment[][]; report: SelectStageReport } {
  const turns = groupTurns(segments);
  const tokens = estimateSegments(segments, measure) + outsideTokens;
  if (tokens <= (compacting ? Math.min(targetTokens, messageBudget) : messageBudget)) {
    return {
      segments: [...segments],
      overflow: [],
      report: { stage: 'select', removed: [], keptTurns: turns.length, overflowTurns: 0, tokensSaved: 0 },
    };
  }
  const required = turns.map(
    (turn, position) =>
      position === turns.length - 1 || hasUnfinishedToolWork(turn.indices.map((index) => segments[index]!)),
  );
  const turnOf = new Map<number, number>();
  turns.forEach((turn, position) => {
    for (const index of turn.indices) turnOf.set(index, position);
  });
  let kept = 0;
  segments.forEach((segment, index) => {
    if (segment.kind !== 'message' || segment.pinned || required[turnOf.get(index)!])
      kept += measure.estimate(segment.tokens);
  });
  const dropped = new Set<number>();
  const overflow: MessageSegment[][] = [];
  let stopped = false;
  let keptTurns = 0;
  for (let position = turns.length - 1; position >= 0; position--) {
    const turn = turns[position]!;
    if (required[position]) {
      keptTurns += 1;
      continue;
    }
    const optional = turn.indices.filter((index) => !(segments[index] as MessageSegment).pinned);
    const cost = optional.reduce((sum, index) => sum + measure.estimate(segments[index]!.tokens), 0);
    if (!stopped && kept + cost <= targetTokens) {
      kept += cost;
      keptTurns += 1;
      continue;
    }
    const turnSegments = optional.map((index) => segments[index]!);
    const shrunk = !stopped && preview ? shrunkTokens(turnSegments, measure, preview) : Number.POSITIVE_INFINITY;
    if (kept + shrunk <= targetTokens) {
      kept += shrunk;
      keptTurns += 1;
      continue;
    }
    stopped = true;
    for (const index of optional) dropped.add(index);
    if (optional.length > 0) overflow.unshift(optional.map((index) => segments[index] as MessageSegment));
  }
  const removed: ContextRemoval[] = [...dropped]
    .sort((a, b) => a - b)
    .map((index) => {
      const segment = segments[index] as MessageSegment;
      return { sequence: segment.sequence, reason: overflowReason, tokens: measure.estimate(segment.tokens) };
    });
  return {
    segments: segments.filter((_segment, index) => !dropped.has(index)),
    overflow,
    report: {
      stage: 'select',
      removed,
      keptTurns,
      overflowTurns: overflow.length,
      tokensSaved: sumRemovedTokens(removed),
    },
  };
}

/** The estimate of segments with their reasoning removed and every tool input and output at its smallest preview. */
function shrunkTokens(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  preview: ContextToolOutputPreviewPolicy,
): number {
  const trimmer = createTrimmer(segments, measure, preview);
  trimmer.shrink(new Set(segments.keys()), () => Number.POSITIVE_INFINITY, undefined, { content: true });
  return trimmer.total();
}
