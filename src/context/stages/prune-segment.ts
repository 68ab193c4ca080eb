import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import type { TokenTally } from '../../tokens/count-message-tokens.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import type { MessageSegment } from '../segments/context-segment.js';
import { applyTallyChange, tallyChange, type TallyChange } from '../segments/retally-messages.js';
import { segmentToolCallIds } from './apply-context-pruning.js';
import { hasReasoning, removeReasoning, removeToolParts } from './prune-message-parts.js';

/** What one application of a pruning decision collects over the segments. */
export interface PruningRun {
  /** Counts what is removed. */
  measure: ContextMeasure;
  /** Tool calls whose traffic to remove. */
  toolCallIds: ReadonlySet<string>;
  /** Approval id → tool call id, over every segment. */
  approvalToCall: ReadonlyMap<string, string>;
  /** What was removed, per segment and step. */
  removed: ContextRemoval[];
  /** Sequences whose reasoning was removed. */
  reasoningSequences: number[];
  /** Tool calls whose traffic was removed. */
  removedToolCallIds: Set<string>;
  /** Each removed call with the sequence of a segment it was removed from. */
  toolCallSequences: Array<[string, number | null]>;
}

// How a segment's messages are pruned under one decision: each step's messages and what it changed in the tally,
// independent of the segment's tally. Planned once per frozen message array (a store's cache hands the same one to
// every request) and decision, then replayed: the steps' arrays are the same objects every time.
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

// Per counter and frozen message array: plans by the decision's flags (reasoning, empty messages, current input as
// bits) and the tool parts it removes.
const plans = new WeakMap<TokenCounter, WeakMap<readonly ModelMessage[], Array<Map<string, PrunePlan> | undefined>>>();

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
  const reasoningApplies = reasoning && messages.some(hasReasoning);
  const toolKey = run.toolCallIds.size > 0 ? toolRemovalKey(messages, run) : '';
  if (!reasoningApplies && toolKey === '' && !(emptyMessages === 'remove' && messages.some(isEmpty))) return segment;
  const flags = (reasoningApplies ? 4 : 0) + (emptyMessages === 'remove' ? 2 : 0) + (currentInput ? 1 : 0);
  const frozen = Object.isFrozen(messages);
  let byCounter = frozen ? plans.get(run.measure.tokenCounter) : undefined;
  if (frozen && !byCounter) plans.set(run.measure.tokenCounter, (byCounter = new WeakMap()));
  let planned = byCounter?.get(messages);
  let plan = planned?.[flags]?.get(toolKey);
  if (!plan) {
    plan = planPruning(run, messages, reasoningApplies, toolKey !== '', emptyMessages, currentInput, frozen);
    if (byCounter) {
      if (!planned) byCounter.set(messages, (planned = []));
      (planned[flags] ??= new Map()).set(toolKey, plan);
    }
  }
  return replayPlan(run, segment, plan);
}

// The tool parts the decision touches in the messages, as a key ('' when none): per part 1 or 0, and for an
// approval response the call it answers (the map is built over every segment). Not '' exactly when the segment
// mentions a call to remove. For a frozen array that answers no approval, none or all of its parts (most segments of
// a long thread) are found from its tool part ids, remembered with the key of all.
function toolRemovalKey(messages: readonly ModelMessage[], run: PruningRun): string {
  const known = Object.isFrozen(messages) ? toolPartsOf(messages) : undefined;
  if (known && !known.answers) {
    let removed = 0;
    for (const id of known.ids) if (run.toolCallIds.has(id)) removed += 1;
    if (removed === 0) return '';
    if (removed === known.ids.length) return known.allKey;
  }
  let key = '';
  let any = false;
  for (const message of messages) {
    if (!touchesTools(message)) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string; approvalId?: string }>) {
      if (part.type === 'tool-approval-response') {
        const call = run.approvalToCall.get(part.approvalId!);
        const removed = call !== undefined && run.toolCallIds.has(call);
        any ||= removed;
        key += removed ? `[${call}]` : '0';
      } else if (isRemovableToolPart(part)) {
        const removed = run.toolCallIds.has(part.toolCallId!);
        any ||= removed;
        key += removed ? '1' : '0';
      }
    }
    key += ',';
  }
  return any ? key : '';
}

const toolParts = new WeakMap<readonly ModelMessage[], { ids: string[]; answers: boolean; allKey: string }>();
// The call ids of the tool calls, results and approval requests (in order), whether an approval is answered, and
// the key when every part is removed.
function toolPartsOf(messages: readonly ModelMessage[]) {
  let known = toolParts.get(messages);
  if (known) return known;
  known = { ids: [], answers: false, allKey: '' };
  for (const message of messages) {
    if (!touchesTools(message)) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string }>) {
      if (part.type === 'tool-approval-response') known.answers = true;
      else if (isRemovableToolPart(part)) {
        known.ids.push(part.toolCallId!);
        known.allKey += '1';
      }
    }
    known.allKey += ',';
  }
  toolParts.set(messages, known);
  return known;
}

function touchesTools(message: ModelMessage): boolean {
  return typeof message.content !== 'string' && (message.role === 'assistant' || message.role === 'tool');
}

function isRemovableToolPart(part: { type: string }): boolean {
  return part.type === 'tool-call' || part.type === 'tool-result' || part.type === 'tool-approval-request';
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

// The plan applied to the segment: its steps' messages and tallies, and what each removed recorded in the run. For
// a frozen segment (a store's cache hands the same one to every request, and this makes frozen ones of those) the
// resulting segment and the tallies along the way are made once per plan.
function replayPlan(run: PruningRun, segment: MessageSegment, plan: PrunePlan): MessageSegment {
  const frozen = Object.isFrozen(segment);
  let replayed = frozen ? replays.get(segment)?.get(plan) : undefined;
  if (!replayed) {
    const tallies = [segment.tokens];
    for (const { change } of plan.steps) tallies.push(applyTallyChange(tallies.at(-1)!, change));
    const last = plan.steps.at(-1);
    const result: MessageSegment = last ? { ...segment, messages: last.messages, tokens: tallies.at(-1)! } : segment;
    replayed = { result, tallies };
    if (frozen) {
      Object.freeze(result.tokens);
      Object.freeze(result);
      let byPlan = replays.get(segment);
      if (!byPlan) replays.set(segment, (byPlan = new WeakMap()));
      byPlan.set(plan, replayed);
    }
  }
  const { tallies } = replayed;
  for (const [index, { reason, toolCallId }] of plan.steps.entries()) {
    const tokens = run.measure.estimate(tallies[index]!) - run.measure.estimate(tallies[index + 1]!);
    run.removed.push(
      toolCallId
        ? { sequence: segment.sequence, reason, tokens, toolCallId }
        : { sequence: segment.sequence, reason, tokens },
    );
  }
  if (plan.reasoningPruned && segment.sequence !== null) run.reasoningSequences.push(segment.sequence);
  for (const id of plan.mentioned) {
    run.removedToolCallIds.add(id);
    run.toolCallSequences.push([id, segment.sequence]);
  }
  return replayed.result;
}

const replays = new WeakMap<MessageSegment, WeakMap<PrunePlan, { result: MessageSegment; tallies: TokenTally[] }>>();

function isEmpty(message: ModelMessage): boolean {
  return message.content.length === 0;
}
