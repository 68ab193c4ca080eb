import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { hasReasoning, removeReasoning, removeToolParts } from './prune-message-parts.js';
import {
  findCurrentInputIndex,
  messageToolIds,
  withMessages,
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
}: ApplyContextPruningOptions): { segments: ContextSegment[]; removed: ContextRemoval[]; pruning: ContextPruning } {
  const currentInput = findCurrentInputIndex(segments);
  const approvalToCall = toolCallIds.size > 0 ? mapApprovalsToCalls(segments) : new Map<string, string>();
  const run: PruningRun = {
    measure,
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

// What one application of a pruning decision collects over the segments.
interface PruningRun {
  measure: ContextMeasure;
  toolCallIds: ReadonlySet<string>;
  approvalToCall: ReadonlyMap<string, string>;
  removed: ContextRemoval[];
  reasoningSequences: number[];
  removedToolCallIds: Set<string>;
  toolCallSequences: Array<[string, number | null]>;
}

// One segment: its reasoning (when `reasoning`), the traffic of the calls to remove, then messages left empty (but
// the current input's first message).
function pruneSegment(
  run: PruningRun,
  segment: MessageSegment,
  reasoning: boolean,
  emptyMessages: 'remove' | 'keep',
  currentInput: boolean,
): MessageSegment {
  let current = segment;
  if (reasoning && current.messages.some(hasReasoning)) {
    current = pruneStep(run, segment, current, current.messages.map(removeReasoning), 'reasoning-pruned');
    if (current !== segment && segment.sequence !== null) run.reasoningSequences.push(segment.sequence);
  }
  if (run.toolCallIds.size > 0) {
    const mentioned = segmentToolCallIds(current, run.approvalToCall).filter((id) => run.toolCallIds.has(id));
    if (mentioned.length > 0) {
      const messages = current.messages.map((message) => removeToolParts(message, run.toolCallIds, run.approvalToCall));
      current = pruneStep(run, segment, current, messages, 'tool-traffic-pruned', mentioned.join(','));
      for (const id of mentioned) {
        run.removedToolCallIds.add(id);
        run.toolCallSequences.push([id, segment.sequence]);
      }
    }
  }
  if (emptyMessages === 'remove' && current.messages.some(isEmpty)) {
    const messages = current.messages.filter(
      (message, position) => !isEmpty(message) || (currentInput && position === 0),
    );
    current = pruneStep(run, segment, current, messages, 'message-empty');
  }
  return current;
}

// `current` with `messages` instead, and its removal recorded; `current` itself when nothing changed.
function pruneStep(
  run: PruningRun,
  segment: MessageSegment,
  current: MessageSegment,
  messages: ModelMessage[],
  reason: ContextRemoval['reason'],
  toolCallId?: string,
): MessageSegment {
  if (
    messages.length === current.messages.length &&
    messages.every((message, position) => message === current.messages[position])
  )
    return current;
  const next = withMessages(current, messages, run.measure);
  run.removed.push({
    sequence: segment.sequence,
    reason,
    tokens: run.measure.estimate(current.tokens) - run.measure.estimate(next.tokens),
    ...(toolCallId ? { toolCallId } : {}),
  });
  return next;
}

/** Approval id → tool call id, over every approval request in the segments. */
export function mapApprovalsToCalls(segments: readonly ContextSegment[]): Map<string, string> {
  const approvalToCall = new Map<string, string>();
  for (const segment of segments)
    for (const message of segment.messages)
      for (const request of messageToolIds(message).approvalRequests)
        approvalToCall.set(request.approvalId, request.toolCallId);
  return approvalToCall;
}

/**
 * The tool calls a segment mentions: calls, results, approval requests, approval responses (through
 * `approvalToCall`) and provider-executed calls.
 */
export function segmentToolCallIds(segment: ContextSegment, approvalToCall: ReadonlyMap<string, string>): string[] {
  // Built only when the segment mentions a call (most segments of a long thread do not, once pruned).
  let ids: Set<string> | undefined;
  for (const message of segment.messages) {
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

function isEmpty(message: ModelMessage): boolean {
  return message.content.length === 0;
}
