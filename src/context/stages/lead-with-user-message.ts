import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { withContextMessageRef } from '../segments/context-message-ref.js';
import { createMessageSegment, type ContextSegment, type MessageSegment } from '../segments/context-segment.js';

/** The text of the user message put before a pinned message whose turn was left out. */
export const leadMessageText =
  '[Earlier turns of this conversation are not shown here; messages pinned from them follow.]';

/** The reference of the lead message: a step's copy of it is recognised as the engine's own. */
const leadRef = 'lead:0';

/** The lead segment: one `user` message, its reference on it. */
export function createLeadSegment(measure: ContextMeasure): MessageSegment {
  const message: ModelMessage = { role: 'user', content: [{ type: 'text', text: leadMessageText }] };
  return createMessageSegment({ messages: [withContextMessageRef(message, leadRef)], sequence: null, measure });
}

/** Whether the segments may need a lead: a pinned message that is not a user's could come first. */
export function mayNeedLead(segments: readonly ContextSegment[]): boolean {
  return segments.some(
    (segment) => segment.kind === 'message' && segment.pinned && segment.messages[0]?.role !== 'user',
  );
}

/**
 * The first message after the summary and the memory is a user message: a context whose first message segment is
 * a pinned one that starts on another role (an answer kept while the turn it answers was left out) gets `lead`
 * ({@link createLeadSegment}) before it, a short user message saying that earlier turns are not shown. Providers
 * that require the conversation to open on a user message accept it, and the pinned answer is not read as a reply
 * to the summary. The lead is not stored: snapshots leave it out, as every unstored message. Without `lead`, or
 * when none is needed, the segments are returned as they are. Idempotent.
 */
export function leadWithUserMessage(segments: ContextSegment[], lead: MessageSegment | undefined): ContextSegment[] {
  const first = lead ? segments.findIndex((segment) => segment.kind === 'message') : -1;
  const segment = segments[first];
  // Only a pinned message: a context that starts on another role because its input did is left as given.
  if (!lead || segment?.kind !== 'message' || !segment.pinned || segment.messages[0]?.role === 'user') return segments;
  return [...segments.slice(0, first), lead, ...segments.slice(first)];
}
