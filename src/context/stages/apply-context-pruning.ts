import type { ModelMessage } from 'ai';
import { measurePrices, type ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { pruneSegment, type PruningRun } from './prune-segment.js';
import { segmentFacts } from '../segments/segment-facts.js';
import {
  findCurrentInputIndex,
  messageToolIds,
  type ContextSegment,
  type MessageSegment,
} from '../segments/context-segment.js';

/** What pruning removed, precisely enough to apply it again ({@link applyContextPruning}); stored in snapshots. */
export interface ContextPruning {
  /** Stored sequences whose reasoning parts were removed. */
  reasoningSequences: number[];
  /** Tool calls whose call, result and approval parts were all removed. */
  toolCallIds: string[];
  /** Each removed tool call with the sequence of a segment it was removed from (null: not stored). */
  toolCallSequences: Array<[toolCallId: string, sequence: number | null]>;
  /** Whether messages left empty were removed. */
  emptyMessages: 'remove' | 'keep';
}

/** Options of {@link applyContextPruning}. */
export interface ApplyContextPruningOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** Counts changed messages. */
  measure: ContextMeasure;
  /** Whether to remove the reasoning of a message segment. */
  reasoningFrom: (segment: MessageSegment, index: number) => boolean;
  /** Tool calls whose traffic to remove. */
  toolCallIds: ReadonlySet<string>;
  /** Whether messages left empty are removed. */
  emptyMessages: 'remove' | 'keep';
  /** {@link mapApprovalsToCalls} of `segments`, when the caller has it. @default made from `segments` */
  approvalToCall?: ReadonlyMap<string, string>;
}

/**
 * Applies a pruning decision. {@link pruneContext} decides and calls it; a snapshot rebuild calls it with the
 * stored {@link ContextPruning}, so both produce the same messages. Unchanged segments are returned as the
 * same objects.
 */
export function applyContextPruning({
  segments,
  measure,
  reasoningFrom,
  toolCallIds,
  emptyMessages,
  approvalToCall = toolCallIds.size > 0 ? mapApprovalsToCalls(segments) : new Map<string, string>(),
}: ApplyContextPruningOptions): { segments: ContextSegment[]; removed: ContextRemoval[]; pruning: ContextPruning } {
  const currentInput = findCurrentInputIndex(segments);
  const run: PruningRun = {
    measure,
    prices: measurePrices(measure),
    toolCallIds,
    approvalToCall,
    removed: [],
    reasoningSequences: [],
    removedToolCallIds: new Set<string>(),
    toolCallSequences: [],
  };
  const output: ContextSegment[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if (segment.kind !== 'message') {
      output.push(segment);
      continue;
    }
    const current = pruneSegment(run, segment, reasoningFrom(segment, index), emptyMessages, index === currentInput);
    if (current.messages.length > 0) output.push(current);
  }
  return {
    segments: output,
    removed: run.removed,
    pruning: {
      reasoningSequences: run.reasoningSequences,
      toolCallIds: [...run.removedToolCallIds],
      toolCallSequences: run.toolCallSequences,
      emptyMessages,
    },
  };
}

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
