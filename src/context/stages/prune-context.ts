import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextPrunePolicy } from '../engine/context-policy.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import {
  estimateSegments,
  findCurrentInputIndex,
  groupTurns,
  hasUnfinishedToolWork,
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
  /** Whether messages left empty were removed. */
  emptyMessages: 'remove' | 'keep';
}

/** What {@link pruneContext} did. */
export interface PruneStageReport {
  /** The stage's tag. */
  stage: 'prune';
  /** Reasoning, tool traffic and empty messages removed, per segment. */
  removed: ContextRemoval[];
  /** Whether old tool traffic was pruned this time. */
  toolTraffic: 'pruned' | 'kept';
  /** Estimated tokens saved. */
  tokensSaved: number;
}

/** Options of {@link pruneContext}. */
export interface PruneContextOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** Counts changed messages and prices them. */
  measure: ContextMeasure;
  /** The budget for all messages; `toolTraffic: 'when-over-budget'` prunes only above it. */
  messageBudget: number;
  /** What to prune. */
  policy: ContextPrunePolicy;
}

/**
 * Stage 5, lossless pruning: removes reasoning outside the newest turns, old tool traffic (a call goes with
 * its result and its approval request and response, never alone: ids used by a protected turn are kept
 * everywhere, as `pruneMessages` does) and messages left empty. Pinned segments are never pruned, turns with unfinished tool
 * work keep their tool traffic; the current input is never removed. Idempotent: pruning its output changes
 * nothing.
 */
export function pruneContext({ segments, measure, messageBudget, policy }: PruneContextOptions): {
  segments: ContextSegment[];
  report: PruneStageReport;
  pruning: ContextPruning;
} {
  const reasoningProtected = newestTurnIndices(segments, policy.reasoningTurns);
  const first = applyContextPruning({
    segments,
    measure,
    reasoningFrom: (segment, index) =>
      policy.reasoning !== 'none' && !segment.pinned && (policy.reasoning === 'all' || !reasoningProtected.has(index)),
    toolCallIds: new Set(),
    emptyMessages: policy.emptyMessages,
  });
  let result = first;
  let toolTraffic: PruneStageReport['toolTraffic'] = 'kept';
  const overBudget = estimateSegments(first.segments, measure) > messageBudget;
  if (policy.toolTraffic === 'outside-newest-turns' || (policy.toolTraffic === 'when-over-budget' && overBudget)) {
    const toolCallIds = prunableToolCallIds(first.segments, policy.toolTrafficTurns);
    if (toolCallIds.size > 0) {
      toolTraffic = 'pruned';
      const second = applyContextPruning({
        segments: first.segments,
        measure,
        reasoningFrom: () => false,
        toolCallIds,
        emptyMessages: policy.emptyMessages,
      });
      result = {
        segments: second.segments,
        removed: [...first.removed, ...second.removed],
        pruning: { ...first.pruning, toolCallIds: second.pruning.toolCallIds },
      };
    }
  }
  return {
    segments: result.segments,
    pruning: result.pruning,
    report: { stage: 'prune', removed: result.removed, toolTraffic, tokensSaved: sumRemovedTokens(result.removed) },
  };
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
  const approvalToCall = new Map<string, string>();
  if (toolCallIds.size > 0) {
    for (const segment of segments)
      for (const message of segment.messages)
        for (const request of messageToolIds(message).approvalRequests)
          approvalToCall.set(request.approvalId, request.toolCallId);
  }
  const removed: ContextRemoval[] = [];
  const reasoningSequences: number[] = [];
  const removedToolCallIds = new Set<string>();
  const output: ContextSegment[] = [];
  segments.forEach((segment, index) => {
    if (segment.kind !== 'message') {
      output.push(segment);
      return;
    }
    let current: MessageSegment = segment;
    const step = (messages: ModelMessage[], reason: ContextRemoval['reason'], toolCallId?: string) => {
      if (
        messages.length === current.messages.length &&
        messages.every((message, position) => message === current.messages[position])
      )
        return;
      const next = withMessages(current, messages, measure);
      removed.push({
        sequence: segment.sequence,
        reason,
        tokens: measure.estimate(current.tokens) - measure.estimate(next.tokens),
        ...(toolCallId ? { toolCallId } : {}),
      });
      current = next;
    };
    if (reasoningFrom(segment, index) && current.messages.some(hasReasoning)) {
      step(current.messages.map(removeReasoning), 'reasoning-pruned');
      if (current !== segment && segment.sequence !== null) reasoningSequences.push(segment.sequence);
    }
    if (toolCallIds.size > 0) {
      const mentioned = segmentToolCallIds(current, approvalToCall).filter((id) => toolCallIds.has(id));
      if (mentioned.length > 0) {
        step(
          current.messages.map((message) => removeToolParts(message, toolCallIds, approvalToCall)),
          'tool-traffic-pruned',
          mentioned.join(','),
        );
        for (const id of mentioned) removedToolCallIds.add(id);
      }
    }
    if (emptyMessages === 'remove' && current.messages.some(isEmpty)) {
      step(
        current.messages.filter((message, position) => !isEmpty(message) || (index === currentInput && position === 0)),
        'message-empty',
      );
    }
    if (current.messages.length > 0) output.push(current);
  });
  return {
    segments: output,
    removed,
    pruning: { reasoningSequences, toolCallIds: [...removedToolCallIds], emptyMessages },
  };
}

/** Segment indices in the newest `count` turns. */
function newestTurnIndices(segments: readonly ContextSegment[], count: number): Set<number> {
  const turns = groupTurns(segments);
  return new Set(turns.slice(Math.max(0, turns.length - count)).flatMap((turn) => turn.indices));
}

/** Tool call ids outside the protected turns (newest, pinned, unfinished) that no protected segment uses. */
function prunableToolCallIds(segments: readonly ContextSegment[], keepTurns: number): Set<string> {
  const turns = groupTurns(segments);
  const protectedIndices = new Set<number>();
  turns.forEach((turn, position) => {
    const turnSegments = turn.indices.map((index) => segments[index]!);
    if (position >= turns.length - keepTurns || hasUnfinishedToolWork(turnSegments))
      for (const index of turn.indices) protectedIndices.add(index);
  });
  segments.forEach((segment, index) => {
    if (segment.kind !== 'message' || segment.pinned) protectedIndices.add(index);
  });
  const approvalToCall = new Map<string, string>();
  for (const segment of segments)
    for (const message of segment.messages)
      for (const request of messageToolIds(message).approvalRequests)
        approvalToCall.set(request.approvalId, request.toolCallId);
  const keep = new Set<string>();
  const candidates = new Set<string>();
  segments.forEach((segment, index) => {
    const ids = segmentToolCallIds(segment, approvalToCall);
    for (const id of ids) (protectedIndices.has(index) ? keep : candidates).add(id);
  });
  for (const id of keep) candidates.delete(id);
  return candidates;
}

function segmentToolCallIds(segment: ContextSegment, approvalToCall: ReadonlyMap<string, string>): string[] {
  const ids = new Set<string>();
  for (const message of segment.messages) {
    const found = messageToolIds(message);
    for (const id of found.calls) ids.add(id);
    for (const id of found.results) ids.add(id);
    for (const request of found.approvalRequests) ids.add(request.toolCallId);
    for (const approvalId of found.approvalResponses) {
      const id = approvalToCall.get(approvalId);
      if (id !== undefined) ids.add(id);
    }
    if (typeof message.content !== 'string' && message.role === 'assistant') {
      for (const part of message.content)
        if (part.type === 'tool-call' && part.providerExecuted === true) ids.add(part.toolCallId);
    }
  }
  return [...ids];
}

function hasReasoning(message: ModelMessage): boolean {
  return (
    message.role === 'assistant' &&
    typeof message.content !== 'string' &&
    message.content.some((part) => part.type === 'reasoning' || part.type === 'reasoning-file')
  );
}

function removeReasoning(message: ModelMessage): ModelMessage {
  if (message.role !== 'assistant' || typeof message.content === 'string' || !hasReasoning(message)) return message;
  const content = message.content.filter((part) => part.type !== 'reasoning' && part.type !== 'reasoning-file');
  return content.length === message.content.length ? message : { ...message, content };
}

function removeToolParts(
  message: ModelMessage,
  ids: ReadonlySet<string>,
  approvalToCall: ReadonlyMap<string, string>,
): ModelMessage {
  if (typeof message.content === 'string') return message;
  if (message.role === 'tool') {
    const content = message.content.filter((part) =>
      part.type === 'tool-result'
        ? !ids.has(part.toolCallId)
        : part.type === 'tool-approval-response'
          ? !ids.has(approvalToCall.get(part.approvalId) ?? '')
          : true,
    );
    return content.length === message.content.length ? message : { ...message, content };
  }
  if (message.role !== 'assistant') return message;
  const parts = message.content;
  const removedAt = parts.map(
    (part) =>
      (part.type === 'tool-call' || part.type === 'tool-result' || part.type === 'tool-approval-request') &&
      ids.has(part.toolCallId),
  );
  if (!removedAt.includes(true)) return message;
  // A run of reasoning goes when everything it led to was removed (keeps OpenAI reasoning items paired).
  const isReasoning = (index: number) => parts[index]!.type === 'reasoning' || parts[index]!.type === 'reasoning-file';
  for (let start = 0; start < parts.length;) {
    if (!isReasoning(start)) {
      start += 1;
      continue;
    }
    let end = start;
    while (end < parts.length && isReasoning(end)) end += 1;
    let next = end;
    while (next < parts.length && !isReasoning(next)) next += 1;
    const followers = removedAt.slice(end, next);
    if (followers.length > 0 && followers.every(Boolean))
      for (let index = start; index < end; index++) removedAt[index] = true;
    start = end;
  }
  return { ...message, content: parts.filter((_part, index) => !removedAt[index]) } as ModelMessage;
}

function isEmpty(message: ModelMessage): boolean {
  return message.content.length === 0;
}
