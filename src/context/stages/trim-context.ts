import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import { groupTurns, type ContextSegment } from '../segments/context-segment.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import { ContextBudgetExceededError } from '../contracts/context-budget-exceeded-error.js';
import { createTrimmer, type Trimmer, type TrimResult } from './create-trimmer.js';

/** Options of {@link trimContext}. */
export interface TrimContextOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** Prices segments and counts previews. */
  measure: ContextMeasure;
  /** The budget for all messages. */
  messageBudget: number;
  /** Preview sizes. */
  preview: ContextToolOutputPreviewPolicy;
  /** Previews made earlier in the same compaction (by {@link shrinkNewestTurn}), which may grow back into room left. */
  earlierPreviews?: readonly ToolOutputPreview[];
}

/** Options of {@link shrinkNewestTurn}. */
export interface ShrinkNewestTurnOptions extends Omit<TrimContextOptions, 'earlierPreviews'> {
  /**
   * The size to shrink to once what may never be dropped exceeds `messageBudget` (the low-water mark): below the
   * budget, so that the next steps append to an unchanged prefix until it is reached again.
   * @default messageBudget
   */
  targetTokens?: number;
  /**
   * Tokens the context stands for beyond `segments` (older turns a window left out), counted with it against
   * `messageBudget`. @default 0
   */
  outsideTokens?: number;
  /**
   * The most the context may stand for beyond `segments` (`outsideTokens` is then the least).
   * @default outsideTokens
   */
  outsideTokensAtMost?: number;
}

/** What {@link shrinkNewestTurn} did. */
export interface ShrinkNewestTurnResult extends TrimResult {
  /**
   * True when what may never be dropped exceeds `targetTokens` and was left as it is only because the context,
   * with `outsideTokens`, fits `messageBudget`, and with `outsideTokensAtMost` would not: a context of which some
   * older turns are left out, with all of them counted, may not have fitted.
   */
  outsideDecides: boolean;
}

/**
 * Stage 8, the final hard trim: makes the context fit `messageBudget`; a context that fits is returned as it is.
 * First what may never be dropped whole (the newest turn, turns with unfinished tool work, pinned messages) is
 * made to fit on its own, by {@link shrinkNewestTurn}. Then, in what is left: the summary, if it fits (else it
 * goes); then the older turns, newest first: a turn that fits is kept whole; one that does not loses its
 * reasoning, then its largest tool inputs and outputs become previews (`preview.tokens`, halved down to
 * `preview.minimumTokens`), then its longest texts, and its files are replaced by a line naming them, until it
 * leaves room for every older turn (or as far as that goes); a turn that still does not fit goes with every older turn (pinned
 * messages stay), so the history never has a hole. Then the memory message, if it fits. Last, previews made by
 * this trim or `earlierPreviews` grow back (newest first) into the room left, so the budget is used. When the newest user
 * message, steering messages and pinned messages alone do not fit, it throws {@link ContextBudgetExceededError}
 * rather than return an over-budget context. Idempotent.
 */
export function trimContext({
  segments,
  measure,
  messageBudget,
  preview,
  earlierPreviews = [],
}: TrimContextOptions): TrimResult {
  const trimmer = createTrimmer(segments, measure, preview);
  const room = () => messageBudget - trimmer.total();
  if (room() < 0) {
    shrinkRequired(trimmer, messageBudget);
    const requiredTokens = trimmer.cost(trimmer.required());
    if (requiredTokens > messageBudget)
      throw new ContextBudgetExceededError({ messageBudgetTokens: messageBudget, requiredTokens });
    fitOlderTurns(trimmer, messageBudget);
  }
  trimmer.grow(earlierPreviews, room);
  return trimmer.result(messageBudget);
}

/**
 * The first part of {@link trimContext} on its own. When what may never be dropped whole (the newest turn,
 * turns with unfinished tool work, pinned messages) does not fit `messageBudget`, it shrinks the newest turn in
 * this order until it does: (1) the reasoning of its assistant messages goes, except that of the newest one;
 * (2) its largest tool inputs and outputs (in every round, and those of pinned messages) become marked previews,
 * each cut just enough to fit but to no more than `preview.tokens`, then half of it, down to
 * `preview.minimumTokens`; (3) whole rounds of the turn go, oldest first (an
 * assistant message with the tool messages that answer it, so a call keeps its result and an approval request
 * its response). User messages are never cut. The engine runs it before selecting and summarizing, so that one
 * huge tool result is shortened instead of pushing the whole history into a summary. Idempotent.
 */
export function shrinkNewestTurn({
  segments,
  measure,
  messageBudget,
  preview,
  targetTokens = messageBudget,
  outsideTokens = 0,
  outsideTokensAtMost = outsideTokens,
}: ShrinkNewestTurnOptions): ShrinkNewestTurnResult {
  const trimmer = createTrimmer(segments, measure, preview);
  const target = Math.min(targetTokens, messageBudget);
  const kept = shrinkRequired(trimmer, messageBudget, target, outsideTokens) === 'kept-as-fitting';
  const outsideDecides = kept && trimmer.total() + outsideTokensAtMost > messageBudget;
  return { ...trimmer.result(messageBudget), outsideDecides };
}

// Over `budget`, shrinks what is required down to `target` (the newest round stays for that), then to `budget` as
// before; fixed-size previews are made smaller only once every older round is gone. Within the budget but over
// `target` when the context as a whole is over the budget (cutting older turns alone would leave the next step no
// room), the older rounds' reasoning and tool payloads are shrunk towards `target`: the newest round stays whole.
// `outsideTokens` counts with the context. Says when what is required was kept over `target` as the context fits.
function shrinkRequired(
  trimmer: Trimmer,
  budget: number,
  target = budget,
  outsideTokens = 0,
): 'kept-as-fitting' | undefined {
  const required = trimmer.required();
  const requiredTokens = trimmer.cost(required);
  if (requiredTokens <= budget && requiredTokens <= target) return undefined;
  if (requiredTokens <= budget && trimmer.total() + outsideTokens <= budget) return 'kept-as-fitting';
  const excess = () => trimmer.cost(required) - target;
  const over = () => trimmer.cost(required) - budget;
  const unpinned = new Set(
    [...required].filter((index) => {
      const segment = trimmer.current[index]!;
      return segment.kind === 'message' && !segment.pinned;
    }),
  );
  const newest = lastAssistantMessage(trimmer.current);
  if (requiredTokens <= budget) {
    trimmer.shrink(unpinned, excess, newest, { previewWithin: required, spare: roundCallIds(newest) });
    return undefined;
  }
  trimmer.shrink(unpinned, excess, newest, { previewWithin: required });
  trimmer.dropRounds(unpinned, excess, newest);
  if (trimmer.fixed) for (const size of trimmer.sizes.slice(1)) if (over() > 0) trimmer.shorten(size, over, required);
  trimmer.dropRounds(unpinned, over);
  return undefined;
}

function fitOlderTurns(trimmer: Trimmer, budget: number): void {
  const required = trimmer.required();
  let left = budget - trimmer.cost(required);
  const take = (indices: number[]) => {
    const tokens = trimmer.cost(indices);
    if (tokens > left) return false;
    left -= tokens;
    return true;
  };
  const summary = trimmer.current.findIndex((segment) => segment.kind === 'summary');
  if (summary >= 0 && !take([summary])) trimmer.drop([summary], 'summary-dropped');
  const turns = groupTurns(trimmer.current).slice(0, -1);
  const optionals = turns.map((turn) =>
    turn.indices.filter((index) => !required.has(index) && trimmer.current[index]!.messages.length > 0),
  );
  let older = optionals.reduce((sum, optional) => sum + trimmer.cost(optional), 0);
  let stopped = false;
  for (let position = turns.length - 1; position >= 0; position--) {
    const optional = optionals[position]!;
    older -= trimmer.cost(optional);
    if (optional.length === 0) continue;
    if (!stopped && take(optional)) continue;
    if (!stopped) {
      // Shrunk just enough to leave room for every older turn, or as far as it goes; the previews grow back
      // into whatever room is left at the end.
      const target = Math.max(0, left - older);
      const restore = trimmer.save();
      trimmer.shrink(new Set(optional), () => trimmer.cost(optional) - target, undefined, { content: true });
      if (take(optional)) continue;
      restore();
      stopped = true;
    }
    trimmer.drop(optional, 'turn-trimmed');
  }
  const memory = trimmer.current.findIndex((segment) => segment.kind === 'memory');
  if (memory >= 0 && !take([memory])) trimmer.drop([memory], 'memory-dropped');
}

// The tool calls of the round of `newest` (its calls, answered by the tool messages after it).
function roundCallIds(newest: ModelMessage | undefined): Set<string> {
  if (!newest || typeof newest.content === 'string') return new Set();
  return new Set(newest.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])));
}

function lastAssistantMessage(segments: readonly ContextSegment[]): ModelMessage | undefined {
  for (let index = segments.length - 1; index >= 0; index--) {
    const messages = segments[index]!.messages;
    for (let position = messages.length - 1; position >= 0; position--)
      if (messages[position]!.role === 'assistant') return messages[position];
  }
  return undefined;
}
