import type { TextStreamPart, ToolSet } from 'ai';
import { addUsage, toMessageUsage } from './message-usage.js';
import type { AnswerPersistenceState } from './answer-persistence-state.js';
import { observeStreamPart } from './observed-model.js';

/**
 * The metadata sent with one part of the model stream: the caller's own, plus the turn's total usage under
 * `usageMetadataKey` on the `finish` part. Each `finish-step` part also adds its usage to `state.usage`, which
 * the finalization stores on the run.
 */
export function answerMetadata<METADATA>(
  state: AnswerPersistenceState,
  part: TextStreamPart<ToolSet>,
  messageMetadata: ((options: { part: TextStreamPart<ToolSet> }) => METADATA) | undefined,
): METADATA | undefined {
  observeStreamPart(state.observed, part);
  if (part.type === 'finish-step') state.usage = addUsage(state.usage, toMessageUsage(part.usage));
  const own = messageMetadata?.({ part });
  if (part.type !== 'finish' || state.usageMetadataKey === false) return own;
  return { ...(own as object | undefined), [state.usageMetadataKey]: toMessageUsage(part.totalUsage) } as typeof own;
}
