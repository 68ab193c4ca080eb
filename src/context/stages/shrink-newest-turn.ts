import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { withMessages, type ContextSegment } from '../segments/context-segment.js';

/** The context after a shrink step, with what the step removed. */
export interface ShrinkResult {
  /** The segments after the step. */
  segments: ContextSegment[];
  /** What was removed, in estimated tokens. */
  removed: ContextRemoval[];
}

/**
 * Removes the reasoning of every assistant message of the segments `within` accepts, except the last assistant
 * message of the context (the provider may need the newest reasoning to continue a tool loop). An assistant
 * message left empty goes. Tool calls, results and approvals are untouched.
 */
export function stripOldReasoning(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: (index: number) => boolean,
): ShrinkResult {
  const last = lastAssistantMessage(segments);
  const removed: ContextRemoval[] = [];
  const result = segments.flatMap((segment, index): ContextSegment[] => {
    if (segment.kind !== 'message' || !within(index)) return [segment];
    let changed = false;
    const messages = segment.messages.flatMap((message): ModelMessage[] => {
      if (message === last || message.role !== 'assistant' || typeof message.content === 'string') return [message];
      const content = message.content.filter((part) => part.type !== 'reasoning');
      if (content.length === message.content.length) return [message];
      changed = true;
      return content.length > 0 ? [{ ...message, content }] : [];
    });
    if (!changed) return [segment];
    const shrunk = withMessages(segment, messages, measure);
    removed.push({
      sequence: segment.sequence,
      reason: 'reasoning-pruned',
      tokens: measure.estimate(segment.tokens) - measure.estimate(shrunk.tokens),
    });
    return messages.length > 0 ? [shrunk] : [];
  });
  return { segments: result, removed };
}

/**
 * Drops whole rounds (an assistant message with the tool messages that answer it) of the segments `within`
 * accepts, oldest first, while `over(saved)` holds. A round holds its calls with their results and its approval
 * requests with their responses, so nothing is split. User messages (the newest input, steering messages) stay.
 * A segment left without messages goes.
 */
export function dropRounds(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: (index: number) => boolean,
  over: (saved: number) => boolean,
): ShrinkResult {
  const removed: ContextRemoval[] = [];
  let saved = 0;
  const result: ContextSegment[] = [];
  for (const [index, segment] of segments.entries()) {
    if (segment.kind !== 'message' || !within(index) || !over(saved)) {
      result.push(segment);
      continue;
    }
    const kept: ModelMessage[] = [];
    let dropping = false;
    for (const message of segment.messages) {
      if (message.role === 'assistant') dropping = over(saved);
      else if (message.role !== 'tool') dropping = false;
      if (!dropping) {
        kept.push(message);
        continue;
      }
      const tokens = measure.estimate(measure.countMessage(message));
      saved += tokens;
      removed.push({ sequence: segment.sequence, reason: 'round-trimmed', tokens });
    }
    if (kept.length === segment.messages.length) result.push(segment);
    else if (kept.length > 0) result.push(withMessages(segment, kept, measure));
  }
  return { segments: result, removed };
}

function lastAssistantMessage(segments: readonly ContextSegment[]): ModelMessage | undefined {
  for (let index = segments.length - 1; index >= 0; index--) {
    const messages = segments[index]!.messages;
    for (let position = messages.length - 1; position >= 0; position--)
      if (messages[position]!.role === 'assistant') return messages[position];
  }
  return undefined;
}
