import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
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

const plans = new WeakMap<TokenCounter, WeakMap<readonly ModelMessage[], Map<string, PrunePlan>>>();

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
  const key = `${reasoningApplies ? 1 : 0}${emptyMessages === 'remove' ? 1 : 0}${currentInput ? 1 : 0}${toolKey}`;
  const frozen = Object.isFrozen(messages);
  let byCounter = frozen ? plans.get(run.measure.tokenCounter) : undefined;
  if (frozen && !byCounter) plans.set(run.measure.tokenCounter, (byCounter = new WeakMap()));
  let planned = byCounter?.get(messages);
  let plan = planned?.get(key);
  if (!plan) {
    plan = planPruning(run, messages, reasoningApplies, toolKey !== '', emptyMessages, currentInput, frozen);
    if (byCounter) {
      if (!planned) byCounter.set(messages, (planned = new Map()));
      planned.set(key, plan);
    }
  }
  return replayPlan(run, segment, plan);
}

// The tool parts the decision touches in the messages, as a key ('' when none): per part 1 or 0, and for an
// approval response the call it answers (the map is built over every segment). Not '' exactly when the segment
// mentions a call to remove.
function toolRemovalKey(messages: readonly ModelMessage[], run: PruningRun): string {
  let key = '';
  let any = false;
  for (const message of messages) {
    if (typeof message.content === 'string' || (message.role !== 'assistant' && message.role !== 'tool')) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string; approvalId?: string }>) {
      if (part.type === 'tool-approval-response') {
        const call = run.approvalToCall.get(part.approvalId!);
        const removed = call !== undefined && run.toolCallIds.has(call);
        any ||= removed;
        key += removed ? `[${call}]` : '0';
      } else if (part.type === 'tool-call' || part.type === 'tool-result' || part.type === 'tool-approval-request') {
        const removed = run.toolCallIds.has(part.toolCallId!);
        any ||= removed;
        key += removed ? '1' : '0';
      }
    }
    key += ',';
  }
  return any ? key : '';
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

// The plan applied to the segment: its steps' messages and tallies, and what each removed recorded in the run.
function replayPlan(run: PruningRun, segment: MessageSegment, plan: PrunePlan): MessageSegment {
  let current = segment;
  for (const { reason, messages, change, toolCallId } of plan.steps) {
    const next: MessageSegment = { ...current, messages, tokens: applyTallyChange(current.tokens, change) };
    run.removed.push({
      sequence: segment.sequence,
      reason,
      tokens: run.measure.estimate(current.tokens) - run.measure.estimate(next.tokens),
      ...(toolCallId ? { toolCallId } : {}),
    });
    current = next;
  }
  if (plan.reasoningPruned && segment.sequence !== null) run.reasoningSequences.push(segment.sequence);
  for (const id of plan.mentioned) {
    run.removedToolCallIds.add(id);
    run.toolCallSequences.push([id, segment.sequence]);
  }
  return current;
}

function isEmpty(message: ModelMessage): boolean {
  return message.content.length === 0;
}
