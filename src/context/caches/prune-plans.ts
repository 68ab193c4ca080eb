import type { ModelMessage } from 'ai';
import { memoOfCounter, type TokenCounter } from '../../tokens/token-counter.js';
import type { MessageSegment } from '../segments/context-segment.js';
import { segmentFacts } from '../segments/segment-facts.js';

// The prune stage's plans and replays (stages/prune-segment.ts), kept for the frozen message arrays and segments a
// store's cache hands to every request: a thread's next request then plans and replays nothing again for its older
// messages. What a plan and a replay hold is the prune stage's business; here they are values kept by their keys.

// Per counter and frozen message array: plans by the decision's flags (reasoning, empty messages, current input as
// bits) and the tool parts it removes.
const plans = new Map<string, WeakMap<readonly ModelMessage[], Array<Map<string, object> | undefined>>>();

/**
 * The plan for `messages` under one decision (`flags`, `toolKey`) and counter: made by `plan` the first time, then
 * the same object for as long as the frozen array lives. An array that is not frozen may change, so its plan is
 * made every time.
 */
export function plannedOnce<PLAN extends object>(
  tokenCounter: TokenCounter,
  messages: readonly ModelMessage[],
  flags: number,
  toolKey: string,
  plan: () => PLAN,
): PLAN {
  if (!Object.isFrozen(messages)) return plan();
  const byCounter = memoOfCounter(plans, tokenCounter);
  let planned = byCounter.get(messages);
  const known = planned?.[flags]?.get(toolKey) as PLAN | undefined;
  if (known) return known;
  const made = plan();
  if (!planned) byCounter.set(messages, (planned = []));
  (planned[flags] ??= new Map()).set(toolKey, made);
  return made;
}

// Per frozen segment without facts, and plan.
const replays = new WeakMap<MessageSegment, WeakMap<object, object>>();

/**
 * The replay of `plan` on `segment`: made by `replay` the first time, then the same object for as long as the frozen
 * segment lives. A segment with facts keeps its replays in them (`SegmentFacts.pruned`), and one that is not frozen
 * may change: neither is kept here.
 */
export function replayedOnce<REPLAYED extends object>(
  segment: MessageSegment,
  plan: object,
  replay: () => REPLAYED,
): REPLAYED {
  const frozen = Object.isFrozen(segment);
  const known = frozen ? (replays.get(segment)?.get(plan) as REPLAYED | undefined) : undefined;
  if (known) return known;
  const made = replay();
  if (frozen && !segmentFacts(segment)) {
    let byPlan = replays.get(segment);
    if (!byPlan) replays.set(segment, (byPlan = new WeakMap()));
    byPlan.set(plan, made);
  }
  return made;
}
