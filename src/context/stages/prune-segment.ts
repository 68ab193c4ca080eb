import type { ModelMessage } from 'ai';
import type { TokenTally } from '../../tokens/count-message-tokens.js';
import { plannedOnce, replayedOnce } from '../caches/prune-plans.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import type { MessageSegment } from '../segments/context-segment.js';
import { applyTallyChange, tallyChange, type TallyChange } from '../segments/retally-messages.js';
import { freezeSegment, segmentFacts } from '../segments/segment-facts.js';
import { segmentToolCallIds } from '../segments/segment-tool-calls.js';
import { hasReasoning, removeReasoning, removeToolParts } from './prune-message-parts.js';
import type { PruningRun } from './pruning-run.js';
import { toolRemovalKey } from './tool-removal-key.js';

// How a segment's messages are pruned under one decision: each step's messages and what it changed in the tally,
// independent of the segment's tally. Planned once per frozen message array (a store's cache hands the same one to
// every request) and decision (`plannedOnce`), then replayed: the steps' arrays are the same objects every time.
interface PrunePlan {
  steps: Array<{
    reason: ContextRemoval['reason'];
    messages: ModelMessage[];
    change: TallyChange;
    toolCallId?: string;
  }>;
  reasoningPruned: boolean;
  mentioned: string[];
}

/**
 * One segment: its reasoning (when `reasoning`), the traffic of the calls to remove, then messages left empty (but
 * the current input's first message). The same segment object when nothing is removed.
 */
export function pruneSegment(
  run: PruningRun,
  segment: MessageSegment,
  reasoning: boolean,
  emptyMessages: 'remove' | 'keep',
  currentInput: boolean,
): MessageSegment {
  const { messages } = segment;
  // A cached segment carries what was found of it (and its pruned forms) on itself.
  const facts = segmentFacts(segment);
  const reasoningApplies =
    reasoning && (facts ? (facts.reasoning ??= messages.some(hasReasoning)) : messages.some(hasReasoning));
  const toolKey = run.toolCallIds.size > 0 ? toolRemovalKey(messages, run, facts) : '';
  const empties =
    emptyMessages === 'remove' && (facts ? (facts.empty ??= messages.some(isEmpty)) : messages.some(isEmpty));
  if (!reasoningApplies && toolKey === '' && !empties) return segment;
  const flags = (reasoningApplies ? 4 : 0) + (emptyMessages === 'remove' ? 2 : 0) + (currentInput ? 1 : 0);
  // The decision of the last request first (a thread's next request decides the same for most segments).
  const last = facts?.lastPruned as Replayed | undefined;
  if (last && last.flags === flags && last.toolKey === toolKey && last.counter === run.measure.tokenCounter.id)
    return record(run, segment, last);
  const known = facts?.pruned?.[flags]?.get(toolKey) as Replayed | undefined;
  if (known && known.counter === run.measure.tokenCounter.id) return record(run, segment, (facts!.lastPruned = known));
  const frozen = Object.isFrozen(messages);
  const plan = plannedOnce(run.measure.tokenCounter, messages, flags, toolKey, () =>
    planPruning(run, messages, reasoningApplies, toolKey !== '', emptyMessages, currentInput, frozen),
  );
  const replayed = replayPlan(run.measure.tokenCounter.id, segment, plan, flags, toolKey);
  if (facts) ((facts.pruned ??= [])[flags] ??= new Map()).set(toolKey, (facts.lastPruned = replayed));
  return record(run, segment, replayed);
}

function planPruning(
  run: PruningRun,
  original: ModelMessage[],
  reasoning: boolean,
  tools: boolean,
  emptyMessages: 'remove' | 'keep',
  currentInput: boolean,
  freeze: boolean,
): PrunePlan {
  const plan: PrunePlan = { steps: [], reasoningPruned: false, mentioned: [] };
  let current = original;
  const step = (messages: ModelMessage[], reason: ContextRemoval['reason'], toolCallId?: string) => {
    if (messages.length === current.length && messages.every((message, position) => message === current[position]))
      return false;
    if (freeze) Object.freeze(messages);
    const change = tallyChange(current, messages, run.measure);
    plan.steps.push({ reason, messages, change, ...(toolCallId ? { toolCallId } : {}) });
    current = messages;
    return true;
  };
  if (reasoning) plan.reasoningPruned = step(current.map(removeReasoning), 'reasoning-pruned');
  if (tools) {
    const mentioned = segmentToolCallIds({ messages: current } as MessageSegment, run.approvalToCall);
    plan.mentioned = mentioned.filter((id) => run.toolCallIds.has(id));
    if (plan.mentioned.length > 0) {
      const messages = current.map((message) => removeToolParts(message, run.toolCallIds, run.approvalToCall));
      step(messages, 'tool-traffic-pruned', plan.mentioned.join(','));
    }
  }
  if (emptyMessages === 'remove' && current.some(isEmpty))
    step(
      current.filter((message, position) => !isEmpty(message) || (currentInput && position === 0)),
      'message-empty',
    );
  return plan;
}

// A plan applied to a segment: the resulting segment (frozen, with its own facts, when the segment is frozen) and
// the tallies along the way. Made once per frozen segment and plan.
interface Replayed {
  /** The id of the counter whose tallies it holds. */
  counter: string;
  flags: number;
  toolKey: string;
  plan: PrunePlan;
  result: MessageSegment;
  tallies: TokenTally[];
  /** Whether it removed reasoning (the plan's, held here with the rest `record` reads). */
  reasoningPruned: boolean;
  /** The calls whose traffic it removed (the plan's). */
  mentioned: readonly string[];
  /** What it removed, as the report lists it (frozen), and the prices they were estimated with ({@link measurePrices}). */
  entries?: readonly ContextRemoval[];
  prices?: object;
}

function replayPlan(
  counter: string,
  segment: MessageSegment,
  plan: PrunePlan,
  flags: number,
  toolKey: string,
): Replayed {
  return replayedOnce(segment, plan, () => {
    const tallies = [segment.tokens];
    for (const { change } of plan.steps) tallies.push(applyTallyChange(tallies.at(-1)!, change));
    const last = plan.steps.at(-1);
    const result: MessageSegment = last ? { ...segment, messages: last.messages, tokens: tallies.at(-1)! } : segment;
    return {
      counter,
      flags,
      toolKey,
      plan,
      result: Object.isFrozen(segment) && result !== segment ? freezeSegment(result) : result,
      tallies,
      reasoningPruned: plan.reasoningPruned,
      mentioned: plan.mentioned,
    };
  });
}

// What the replay removed, recorded in the run: per step its estimate, then the reasoning and calls removed.
function record(run: PruningRun, segment: MessageSegment, replayed: Replayed): MessageSegment {
  const entries = removalsOf(run, segment, replayed);
  for (let index = 0; index < entries.length; index++) run.removed.push(entries[index]!);
  if (replayed.reasoningPruned && segment.sequence !== null) run.reasoningSequences.push(segment.sequence);
  const { mentioned } = replayed;
  for (let index = 0; index < mentioned.length; index++) {
    const id = mentioned[index]!;
    run.removedToolCallIds.add(id);
    run.toolCallSequences.push([id, segment.sequence]);
  }
  return replayed.result;
}

// The removals of a replay, made once per segment and prices when the segment is frozen (a thread's next request
// lists the same ones for most segments): the report then lists the same frozen entries.
function removalsOf(run: PruningRun, segment: MessageSegment, replayed: Replayed): readonly ContextRemoval[] {
  const prices = run.prices;
  if (prices !== undefined && replayed.prices === prices) return replayed.entries!;
  const { plan, tallies } = replayed;
  const entries: ContextRemoval[] = [];
  for (let index = 0; index < plan.steps.length; index++) {
    const { reason, toolCallId } = plan.steps[index]!;
    const tokens = run.measure.estimate(tallies[index]!) - run.measure.estimate(tallies[index + 1]!);
    entries.push(
      toolCallId
        ? { sequence: segment.sequence, reason, tokens, toolCallId }
        : { sequence: segment.sequence, reason, tokens },
    );
  }
  if (prices === undefined || !Object.isFrozen(segment)) return entries;
  for (const entry of entries) Object.freeze(entry);
  replayed.entries = Object.freeze(entries);
  replayed.prices = prices;
  return entries;
}

function isEmpty(message: ModelMessage): boolean {
  return message.content.length === 0;
}
