import type { ModelMessage } from 'ai';
import { messageToolIds, type ContextSegment } from './context-segment.js';
import { segmentFacts } from './segment-facts.js';

/** Approval id → tool call id, over every approval request in the segments. */
export function mapApprovalsToCalls(segments: readonly ContextSegment[]): Map<string, string> {
  const approvalToCall = new Map<string, string>();
  for (const segment of segments) {
    if (segmentFacts(segment)) {
      for (const request of approvalRequestsOf(segment)) approvalToCall.set(request.approvalId, request.toolCallId);
      continue;
    }
    // Any other segment (the caller's step, a copy): read, not remembered.
    for (const message of segment.messages)
      for (const request of messageToolIds(message).approvalRequests)
        approvalToCall.set(request.approvalId, request.toolCallId);
  }
  return approvalToCall;
}

type ApprovalRequests = ReadonlyArray<{ approvalId: string; toolCallId: string }>;

// The approval requests of a cached segment's messages, in order, found once.
function approvalRequestsOf(segment: ContextSegment): ApprovalRequests {
  const facts = segmentFacts(segment)!;
  return (facts.approvalRequests ??= segment.messages.flatMap((message) => messageToolIds(message).approvalRequests));
}

/**
 * The tool calls a segment mentions: calls, results, approval requests, approval responses (through
 * `approvalToCall`) and provider-executed calls.
 */
export function segmentToolCallIds(
  segment: Pick<ContextSegment, 'messages'>,
  approvalToCall: ReadonlyMap<string, string>,
): readonly string[] {
  const { messages } = segment;
  const facts = segmentFacts(segment);
  if (!facts) return toolCallIdsOf(messages, approvalToCall);
  // A cached segment's ids are found once when it answers no approval (the only ids that depend on the others).
  facts.callIds ??= answersApproval(messages) ? null : Object.freeze(toolCallIdsOf(messages, approvalToCall));
  return facts.callIds ?? toolCallIdsOf(messages, approvalToCall);
}

function answersApproval(messages: readonly ModelMessage[]): boolean {
  return messages.some((message) => messageToolIds(message).approvalResponses.length > 0);
}

function toolCallIdsOf(messages: readonly ModelMessage[], approvalToCall: ReadonlyMap<string, string>): string[] {
  // Built only when the segment mentions a call (most segments of a long thread do not, once pruned).
  let ids: Set<string> | undefined;
  for (const message of messages) {
    const found = messageToolIds(message);
    for (const id of found.calls) (ids ??= new Set()).add(id);
    for (const id of found.results) (ids ??= new Set()).add(id);
    for (const request of found.approvalRequests) (ids ??= new Set()).add(request.toolCallId);
    for (const approvalId of found.approvalResponses) {
      const id = approvalToCall.get(approvalId);
      if (id !== undefined) (ids ??= new Set()).add(id);
    }
    if (typeof message.content !== 'string' && message.role === 'assistant') {
      for (const part of message.content)
        if (part.type === 'tool-call' && part.providerExecuted === true) (ids ??= new Set()).add(part.toolCallId);
    }
  }
  return ids ? [...ids] : [];
}
