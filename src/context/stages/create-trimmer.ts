import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../engine/context-policy.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import {
  estimateSegments,
  groupTurns,
  hasUnfinishedToolWork,
  withMessages,
  type ContextSegment,
} from '../segments/context-segment.js';
import { applyToolOutputPreviews, type ToolOutputPreview } from './apply-tool-output-previews.js';
import { contentPartKey } from './preview-message-content.js';
import { toolInputText } from './preview-tool-input.js';

type ContentPart = Exclude<ModelMessage['content'], string>[number];
import { toolOutputText } from './preview-tool-output.js';
import {
  dropRounds,
  stripReasoning,
  type DroppedRound,
  type ShrinkResult,
  type TrimmedReasoning,
} from './shrink-newest-turn.js';
import type { TrimStageReport } from './trim-context.js';

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
export function createTrimmer(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  policy: ContextToolOutputPreviewPolicy,
) {
  let current = [...segments];
  let removed: ContextRemoval[] = [];
  let previews = new Map<string, ToolOutputPreview>();
  let reasoning: TrimmedReasoning[] = [];
  let rounds: DroppedRound[] = [];
  const sizes = previewSizes(policy);
  // Estimated tokens per raw text token (the profile's factor times the calibration).
  const textFactor = Math.max(1, measure.estimate({ text: 1_000_000, images: 0, files: 0, messages: 0 }) / 1_000_000);
  const cost = (indices: Iterable<number>) => {
    let sum = 0;
    for (const index of indices) sum += measure.estimate(current[index]!.tokens);
    return sum;
  };
  // Replaces one input or output of the segment at `index` by a preview; true when that changed it.
  const preview = (index: number, entry: ToolOutputPreview) => {
    const before = current[index]!;
    const after = applyToolOutputPreviews({ segments: [before], previews: [entry], measure }).segments[0]!;
    if (after === before) return false;
    current[index] = after;
    previews.set(`${entry.part ?? 'output'}:${entry.toolCallId}`, entry);
    removed.push({
      sequence: before.kind === 'message' ? before.sequence : null,
      reason: 'tool-output-previewed',
      tokens: measure.estimate(before.tokens) - measure.estimate(after.tokens),
      toolCallId: entry.toolCallId,
    });
    return true;
  };
  const trimmer = {
    get current() {
      return current;
    },
    sizes,
    cost,
    total: () => estimateSegments(current, measure),
    /** Segment indices of the newest turn, turns with unfinished tool work, and pinned messages. */
    required: () => requiredIndices(current),
    /** Empties the segments at `indices` (they go in the result). */
    drop(indices: Iterable<number>, reason: ContextRemoval['reason']) {
      for (const index of indices) {
        const segment = current[index]!;
        if (segment.messages.length === 0) continue;
        const sequence = segment.kind === 'message' ? segment.sequence : null;
        removed.push({ sequence, reason, tokens: measure.estimate(segment.tokens) });
        current[index] = withMessages(segment, [], measure);
      }
    },
    /** Applies a shrink step and records what it did; true when it removed anything. */
    apply(shrunk: ShrinkResult) {
      if (shrunk.removed.length === 0) return false;
      current = shrunk.segments;
      removed.push(...shrunk.removed);
      reasoning.push(...shrunk.reasoning);
      rounds.push(...shrunk.rounds);
      return true;
    },
    /** Previews the largest tool inputs and outputs (of the segments in `within`) at `size` while `excess()` > 0. */
    shorten(size: number, excess: () => number, within: ReadonlySet<number>, content = false) {
      for (const candidate of previewCandidates(current, measure, within, content)) {
        if (excess() <= 0) return;
        if (candidate.tokens > size)
          preview(candidate.index, { toolCallId: candidate.toolCallId, maxTokens: size, ...candidate.part });
      }
    },
    /**
     * Lets the previews made so far (and `earlier` ones of the same compaction) grow back, newest first, into
     * `room()` estimated tokens, so that the budget is used rather than left empty.
     */
    grow(earlier: readonly ToolOutputPreview[], room: () => number) {
      const made = [...earlier, ...previews.values()];
      if (made.length === 0) return;
      const latest = new Map(made.map((entry) => [`${entry.part ?? 'output'}:${entry.toolCallId}`, entry]));
      for (const index of [...current.keys()].reverse()) {
        for (const candidate of previewCandidates(current, measure, new Set([index]), true)) {
          if (candidate.file) continue;
          const key = `${candidate.part.part ?? 'output'}:${candidate.toolCallId}`;
          const entry = latest.get(key);
          let spare = Math.floor(room() / textFactor) - previewSlack;
          if (!entry || spare <= 0) continue;
          const before = current[index]!;
          // Grown from its current size; when the count overshoots (a cut mid-word), tried again a little smaller.
          let grown: ContextRemoval | undefined;
          for (let attempt = 0; attempt < 3 && spare > 0 && !grown; attempt++) {
            if (!preview(index, { ...entry, maxTokens: candidate.tokens + spare })) break;
            grown = removed.pop()!;
            const overshoot = -room();
            if (overshoot > 0) {
              current[index] = before;
              previews.set(key, entry);
              grown = undefined;
              spare -= Math.ceil(overshoot / textFactor) + previewSlack;
            }
          }
          if (!grown) continue;
          // The preview saves less than it did: its removal says so (or a negative one for an earlier preview).
          const first = removed.find((item) => item.reason === grown.reason && item.toolCallId === grown.toolCallId);
          if (first) first.tokens += grown.tokens;
          else removed.push(grown);
        }
      }
    },
    /**
     * While `excess()` > 0: the reasoning of the segments in `within` goes (but that of `keep`), then the tool
     * inputs and outputs of the segments in `previewWithin` become previews, largest first, at every size; then,
     * with `content`, their text parts too, and their files are left out.
     */
    shrink(
      within: ReadonlySet<number>,
      excess: () => number,
      keep: ModelMessage | undefined,
      { previewWithin = within, content = false }: { previewWithin?: ReadonlySet<number>; content?: boolean } = {},
    ) {
      if (excess() > 0) trimmer.apply(stripReasoning(current, measure, (index) => within.has(index), keep));
      for (const size of sizes) if (excess() > 0) trimmer.shorten(size, excess, previewWithin);
      if (content) for (const size of sizes) if (excess() > 0) trimmer.shorten(size, excess, previewWithin, true);
    },
    /** Drops whole rounds of the segments in `within`, oldest first, while `over()` holds. */
    dropRounds(within: ReadonlySet<number>, excess: () => number) {
      while (excess() > 0) {
        const target = excess();
        const step = dropRounds(
          current,
          measure,
          (index) => within.has(index),
          (saved) => saved < target,
        );
        if (!trimmer.apply(step)) return;
      }
    },
    /** The state, to restore an attempt that did not pay off. */
    save() {
      const saved = { current: [...current], removed: [...removed], previews: new Map(previews) };
      const counts = { reasoning: reasoning.length, rounds: rounds.length };
      return () => {
        current = saved.current;
        removed = saved.removed;
        previews = saved.previews;
        reasoning = reasoning.slice(0, counts.reasoning);
        rounds = rounds.slice(0, counts.rounds);
      };
    },
    result(budget: number): TrimResult {
      const previewList = [...previews.values()];
      const total = trimmer.total();
      return {
        segments: current.filter((segment) => segment.messages.length > 0),
        previews: previewList,
        reasoning: [...reasoning],
        rounds: [...rounds],
        report: {
          stage: 'trim',
          removed,
          previews: previewList,
          overBudgetTokens: Math.max(0, total - budget),
          tokensSaved: sumRemovedTokens(removed),
        },
      };
    },
  };
  return trimmer;
}

const previewSlack = 24;

/** The trimming state of {@link createTrimmer}. */
export type Trimmer = ReturnType<typeof createTrimmer>;

interface PreviewCandidate {
  index: number;
  toolCallId: string;
  tokens: number;
  part: { part?: 'input' | 'content' };
  file: boolean;
}

/**
 * Tool inputs and outputs in the segments of `within`, largest first; with `content`, also the text and file
 * parts of stored messages (of older turns: the newest turn's are never shortened).
 */
function previewCandidates(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: ReadonlySet<number>,
  content = false,
): PreviewCandidate[] {
  const candidates: PreviewCandidate[] = [];
  const count = (text: string) => measure.tokenCounter.count(text);
  for (const index of within) {
    const segment = segments[index]!;
    if (segment.kind !== 'message') continue;
    for (const message of segment.messages) {
      if (typeof message.content === 'string' || message.role === 'system') continue;
      for (const part of message.content as ContentPart[]) {
        if (part.type === 'tool-result')
          candidates.push({
            index,
            toolCallId: part.toolCallId,
            tokens: count(toolOutputText(part.output)),
            part: {},
            file: false,
          });
        else if (part.type === 'tool-call')
          candidates.push({
            index,
            toolCallId: part.toolCallId,
            tokens: count(toolInputText(part.input)),
            part: { part: 'input' },
            file: false,
          });
        else if (content) {
          const key = contentPartKey(segment.sequence, part);
          if (key === undefined) continue;
          const file = part.type !== 'text';
          const tokens = file ? Number.MAX_SAFE_INTEGER : count((part as { text: string }).text);
          candidates.push({ index, toolCallId: key, tokens, part: { part: 'content' }, file });
        }
      }
    }
  }
  return candidates
    .map((candidate, order) => ({ ...candidate, order }))
    .sort((a, b) => b.tokens - a.tokens || a.index - b.index || a.order - b.order);
}

// The preview sizes tried in turn: `tokens`, halved down to `minimumTokens`.
function previewSizes(preview: ContextToolOutputPreviewPolicy): number[] {
  const sizes = [preview.tokens];
  for (let size = Math.floor(preview.tokens / 2); size > preview.minimumTokens; size = Math.floor(size / 2))
    sizes.push(size);
  if (preview.minimumTokens < preview.tokens) sizes.push(preview.minimumTokens);
  return sizes;
}

/** Segment indices of the newest turn, of turns with unfinished tool work, and of pinned messages. */
export function requiredIndices(segments: readonly ContextSegment[]): Set<number> {
  const turns = groupTurns(segments);
  const required = new Set<number>();
  turns.forEach((turn, position) => {
    if (position === turns.length - 1 || hasUnfinishedToolWork(turn.indices.map((index) => segments[index]!)))
      for (const index of turn.indices) required.add(index);
  });
  segments.forEach((segment, index) => {
    if (segment.kind === 'message' && segment.pinned) required.add(index);
  });
  return required;
}
