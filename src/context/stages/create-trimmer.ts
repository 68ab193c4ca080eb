import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import { estimateSegments, withMessages, type ContextSegment } from '../segments/context-segment.js';
import { applyToolOutputPreviews, callKey } from './apply-tool-output-previews.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import { previewCandidates, previewOf, previewSizes, requiredIndices } from './preview-candidates.js';
import {
  dropRounds,
  stripReasoning,
  type DroppedRound,
  type ShrinkResult,
  type TrimmedReasoning,
} from './shrink-newest-turn.js';
import type { TrimStageReport } from '../contracts/stage-reports.js';

/** What a trim did, precisely enough for a snapshot to apply it again. */
export interface TrimResult {
  /** The context after the trim. */
  segments: ContextSegment[];
  /** The previews made (the latest size per call input or output). */
  previews: ToolOutputPreview[];
  /** Stored messages whose reasoning the trim removed. */
  reasoning: TrimmedReasoning[];
  /** Stored rounds the trim dropped. */
  rounds: DroppedRound[];
  /** The stage report. */
  report: TrimStageReport;
}

/**
 * The trimming state of `trimContext` and `shrinkNewestTurn`. Every step keeps segment indices stable (a
 * removed segment stays as an empty one until {@link Trimmer.result}), so index sets stay valid throughout.
 */
export class Trimmer {
  /** The context as cut so far (removed segments are empty). */
  current: ContextSegment[];
  /** The preview sizes tried in turn. */
  readonly sizes: number[];
  /** The sizes {@link Trimmer.shrink} tries: all of them, or with fixed sizing the first only. */
  readonly shrinkSizes: number[];
  /** Whether previews keep one size (never grow back, smaller only as a last resort). */
  readonly fixed: boolean;
  private removed: ContextRemoval[] = [];
  private previews = new Map<string, ToolOutputPreview>();
  private reasoning: TrimmedReasoning[] = [];
  private rounds: DroppedRound[] = [];
  // Estimated tokens per raw text token (the profile's factor times the calibration).
  private readonly textFactor: number;

  constructor(
    segments: readonly ContextSegment[],
    private readonly measure: ContextMeasure,
    policy: ContextToolOutputPreviewPolicy,
  ) {
    this.current = [...segments];
    this.sizes = previewSizes(policy);
    this.fixed = policy.sizing === 'fixed';
    this.shrinkSizes = this.fixed ? this.sizes.slice(0, 1) : this.sizes;
    this.textFactor = Math.max(1, measure.estimate({ text: 1_000_000, images: 0, files: 0, messages: 0 }) / 1_000_000);
  }

  /** The estimate of the segments at `indices`. */
  cost(indices: Iterable<number>): number {
    let sum = 0;
    for (const index of indices) sum += this.measure.estimate(this.current[index]!.tokens);
    return sum;
  }

  /** The estimate of the whole context. */
  total(): number {
    return estimateSegments(this.current, this.measure);
  }

  /** Segment indices of the newest turn, turns with unfinished tool work, and pinned messages. */
  required(): Set<number> {
    return requiredIndices(this.current);
  }

  /** Empties the segments at `indices` (they go in the result). */
  drop(indices: Iterable<number>, reason: ContextRemoval['reason']): void {
    for (const index of indices) {
      const segment = this.current[index]!;
      if (segment.messages.length === 0) continue;
      const sequence = segment.kind === 'message' ? segment.sequence : null;
      this.removed.push({ sequence, reason, tokens: this.measure.estimate(segment.tokens) });
      this.current[index] = withMessages(segment, [], this.measure);
    }
  }

  /** Applies a shrink step and records what it did; true when it removed anything. */
  apply(shrunk: ShrinkResult): boolean {
    if (shrunk.removed.length === 0) return false;
    this.current = shrunk.segments;
    this.removed.push(...shrunk.removed);
    this.reasoning.push(...shrunk.reasoning);
    this.rounds.push(...shrunk.rounds);
    return true;
  }

  /** Replaces one input, output or content part of the segment at `index` by a preview; true when that changed it. */
  private preview(index: number, entry: ToolOutputPreview): boolean {
    const before = this.current[index]!;
    const after = applyToolOutputPreviews({ segments: [before], previews: [entry], measure: this.measure })
      .segments[0]!;
    if (after === before) return false;
    this.current[index] = after;
    this.previews.set(previewKey(entry), entry);
    this.removed.push({
      sequence: before.kind === 'message' ? before.sequence : null,
      reason: 'tool-output-previewed',
      tokens: this.measure.estimate(before.tokens) - this.measure.estimate(after.tokens),
      toolCallId: entry.toolCallId,
    });
    return true;
  }

  /** Previews the largest tool inputs and outputs (of the segments in `within`) at `size` while `excess()` > 0. */
  shorten(size: number, excess: () => number, within: ReadonlySet<number>, content = false, spare?: Set<string>): void {
    for (const candidate of previewCandidates(this.current, this.measure, within, content)) {
      if (excess() <= 0) return;
      if (candidate.tokens > size && !spare?.has(candidate.toolCallId))
        this.preview(candidate.index, { ...previewOf(this.current, candidate), maxTokens: size });
    }
  }

  /**
   * Lets the previews made so far (and `earlier` ones of the same compaction) grow back, newest first, into
   * `room()` estimated tokens, so that the budget is used rather than left empty. Fixed-size previews never grow.
   */
  grow(earlier: readonly ToolOutputPreview[], room: () => number): void {
    if (this.fixed) return;
    const made = [...earlier, ...this.previews.values()];
    if (made.length === 0) return;
    const latest = new Map(made.map((entry) => [previewKey(entry), entry]));
    for (const index of [...this.current.keys()].reverse()) {
      for (const candidate of previewCandidates(this.current, this.measure, new Set([index]), true)) {
        const entry = latest.get(previewKey(previewOf(this.current, candidate)));
        if (entry && !candidate.file) this.growOne(index, entry, candidate.tokens, room);
      }
    }
  }

  // Grows one preview from its current size; when the count overshoots (a cut mid-word), a little smaller.
  private growOne(index: number, entry: ToolOutputPreview, tokens: number, room: () => number): void {
    let spare = Math.floor(room() / this.textFactor) - previewSlack;
    const before = this.current[index]!;
    for (let attempt = 0; attempt < 3 && spare > 0; attempt++) {
      if (!this.preview(index, { ...entry, maxTokens: tokens + spare })) return;
      const grown = this.removed.pop()!;
      const overshoot = -room();
      if (overshoot <= 0) {
        // The preview saves less than it did: its removal says so (or a negative one for an earlier preview).
        const first = this.removed.find((item) => item.reason === grown.reason && item.toolCallId === grown.toolCallId);
        if (first) first.tokens += grown.tokens;
        else this.removed.push(grown);
        return;
      }
      this.current[index] = before;
      this.previews.set(previewKey(entry), entry);
      spare -= Math.ceil(overshoot / this.textFactor) + previewSlack;
    }
  }

  /**
   * While `excess()` > 0: the reasoning of the segments in `within` goes (but that of `keep`), then the tool
   * inputs and outputs of the segments in `previewWithin` become previews, largest first, at every size (the
   * first only, with fixed sizing), but those of the calls in `spare`; then, with `content`, their text parts too,
   * and their files are left out.
   */
  shrink(
    within: ReadonlySet<number>,
    excess: () => number,
    keep: ModelMessage | undefined,
    {
      previewWithin = within,
      content = false,
      spare,
    }: { previewWithin?: ReadonlySet<number>; content?: boolean; spare?: Set<string> } = {},
  ): void {
    if (excess() > 0) this.apply(stripReasoning(this.current, this.measure, (index) => within.has(index), keep));
    for (const size of this.shrinkSizes) if (excess() > 0) this.shorten(size, excess, previewWithin, false, spare);
    if (content) for (const size of this.shrinkSizes) if (excess() > 0) this.shorten(size, excess, previewWithin, true);
  }

  /** Drops whole rounds of the segments in `within`, oldest first, while `excess()` > 0; never the round of `keep`. */
  dropRounds(within: ReadonlySet<number>, excess: () => number, keep?: ModelMessage): void {
    while (excess() > 0) {
      const target = excess();
      const step = dropRounds(
        this.current,
        this.measure,
        (index) => within.has(index),
        (saved) => saved < target,
        keep,
      );
      if (!this.apply(step)) return;
    }
  }

  /** The state, to restore an attempt that did not pay off. */
  save(): () => void {
    const saved = { current: [...this.current], removed: [...this.removed], previews: new Map(this.previews) };
    const counts = { reasoning: this.reasoning.length, rounds: this.rounds.length };
    return () => {
      this.current = saved.current;
      this.removed = saved.removed;
      this.previews = saved.previews;
      this.reasoning = this.reasoning.slice(0, counts.reasoning);
      this.rounds = this.rounds.slice(0, counts.rounds);
    };
  }

  /** What the trim did. */
  result(budget: number): TrimResult {
    const previewList = [...this.previews.values()];
    return {
      segments: this.current.filter((segment) => segment.messages.length > 0),
      previews: previewList,
      reasoning: [...this.reasoning],
      rounds: [...this.rounds],
      report: {
        stage: 'trim',
        removed: this.removed,
        previews: previewList,
        overBudgetTokens: Math.max(0, this.total() - budget),
        tokensSaved: sumRemovedTokens(this.removed),
      },
    };
  }
}

/** A new {@link Trimmer}. */
export function createTrimmer(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  policy: ContextToolOutputPreviewPolicy,
): Trimmer {
  return new Trimmer(segments, measure, policy);
}

const previewKey = (entry: Pick<ToolOutputPreview, 'part' | 'toolCallId' | 'sequence'>) =>
  `${entry.part ?? 'output'}:${callKey(entry)}`;

const previewSlack = 24;
