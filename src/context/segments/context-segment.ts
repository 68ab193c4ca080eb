import type { ModelMessage } from 'ai';
import { segmentFacts } from './segment-facts.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { addTokenTallies, type TokenTally } from '../../tokens/count-message-tokens.js';
import { retallyMessages } from './retally-messages.js';
import type { WorkingMemorySegment } from './working-memory-segment.js';
import type { RecalledSegment } from './recalled-segment.js';

export type { WorkingMemorySegment, RecalledSegment };

interface SegmentBase {
  /** The model messages of the segment, in order. */
  messages: ModelMessage[];
  /** Their raw token tally. */
  tokens: TokenTally;
}

/**
 * The model messages converted from one stored message (one sequence), or, for messages not stored yet
 * (the current request's steps), one assistant message with the tool messages that answer it. A segment
 * always holds a tool call together with its result, so keeping or dropping whole segments never orphans one.
 */
export interface MessageSegment extends SegmentBase {
  /** The segment's tag. */
  kind: 'message';
  /** The stored message's sequence, or null when the messages are not stored yet or of unknown origin. */
  sequence: number | null;
  /** Pinned segments are kept whatever the budget (and never pruned). */
  pinned: boolean;
}

/** The summary of earlier turns, placed first as a `user` message (never a system message). */
export interface SummarySegment extends SegmentBase {
  /** The segment's tag. */
  kind: 'summary';
  /** The stored summary's id. */
  summaryId: string;
  /** The first sequence the summary covers (inclusive). */
  fromSequence: number;
  /** The last sequence the summary covers (inclusive). */
  throughSequence: number;
  /** The summary text without the header (what a summarizer extends). */
  content: string;
}

/** Relevant earlier messages found by search, quoted in one `user` message after the summary. */
export interface MemorySegment extends SegmentBase {
  /** The segment's tag. */
  kind: 'memory';
  /** The sequences quoted, in the order they appear. */
  sequences: number[];
}

/** A unit the stages keep or drop as a whole. */
export type ContextSegment = MessageSegment | SummarySegment | MemorySegment | WorkingMemorySegment | RecalledSegment;

/**
 * A turn: one user message and everything it caused (DESIGN principle 6), as the indices of its message
 * segments. Segments before the first user message form a turn of their own.
 */
export interface ContextTurn {
  /** Indices into the segment array, ascending. */
  indices: number[];
}

/** Groups the message segments into turns; summary and memory segments belong to no turn. */
export function groupTurns(segments: readonly ContextSegment[]): ContextTurn[] {
  // The message segments' indices in one list, then each turn's as a slice of it: an array grown by pushes takes
  // room for 17 items, and a long thread has hundreds of turns of two or three segments, grouped several times a call.
  const indices: number[] = [];
  const starts: number[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if (segment.kind !== 'message') continue;
    if (starts.length === 0 || segment.messages[0]?.role === 'user') starts.push(indices.length);
    indices.push(index);
  }
  const turns: ContextTurn[] = [];
  for (let turn = 0; turn < starts.length; turn++)
    turns.push({ indices: indices.slice(starts[turn], starts[turn + 1] ?? indices.length) });
  return turns;
}

/** The model messages of the segments, in order. */
export function renderSegments(segments: readonly ContextSegment[]): ModelMessage[] {
  return segments.flatMap((segment) => segment.messages);
}

/** The raw tally of the segments. */
export function tallySegments(segments: readonly ContextSegment[]): TokenTally {
  return addTokenTallies(...segments.map((segment) => segment.tokens));
}

/** The model-estimated tokens of the segments (summed per segment, each rounded up). */
export function estimateSegments(segments: readonly ContextSegment[], measure: ContextMeasure): number {
  let total = 0;
  for (const segment of segments) total += measure.estimate(segment.tokens);
  return total;
}

/** The index of the segment holding the newest user message (the current input), or -1. */
export function findCurrentInputIndex(segments: readonly ContextSegment[]): number {
  for (let index = segments.length - 1; index >= 0; index--) {
    const segment = segments[index]!;
    if (segment.kind === 'message' && segment.messages[0]?.role === 'user') return index;
  }
  return -1;
}

/** The tool ids a message mentions. */
export interface MessageToolIds {
  /** Ids of tool calls that are not provider-executed (they need a result in a tool message). */
  calls: string[];
  /** Ids of tool results. */
  results: string[];
  /** Approval requests: approval id and call id. */
  approvalRequests: Array<{ approvalId: string; toolCallId: string }>;
  /** Approval ids of approval responses. */
  approvalResponses: string[];
}

const toolIdMemo = new WeakMap<ModelMessage, MessageToolIds>();
const noToolIds: MessageToolIds = Object.freeze({
  calls: [],
  results: [],
  approvalRequests: [],
  approvalResponses: [],
}) as MessageToolIds;

/** The tool ids in a message (memoised per message object). */
export function messageToolIds(message: ModelMessage): MessageToolIds {
  if (typeof message.content === 'string' || message.role === 'user' || message.role === 'system') return noToolIds;
  // A message without tool parts (most, once old tool traffic is pruned) is looked at, not remembered: a memo entry
  // for each new message object costs more than reading its few part types again.
  if (!message.content.some(isToolPart)) return noToolIds;
  const cached = toolIdMemo.get(message);
  if (cached) return cached;
  const ids: MessageToolIds = { calls: [], results: [], approvalRequests: [], approvalResponses: [] };
  for (const part of message.content) {
    if (part.type === 'tool-call' && part.providerExecuted !== true) ids.calls.push(part.toolCallId);
    else if (part.type === 'tool-result') ids.results.push(part.toolCallId);
    else if (part.type === 'tool-approval-request')
      ids.approvalRequests.push({ approvalId: part.approvalId, toolCallId: part.toolCallId });
    else if (part.type === 'tool-approval-response') ids.approvalResponses.push(part.approvalId);
  }
  const result =
    ids.calls.length + ids.results.length + ids.approvalRequests.length + ids.approvalResponses.length === 0
      ? noToolIds
      : ids;
  toolIdMemo.set(message, result);
  return result;
}

function isToolPart(part: { type: string }): boolean {
  return (
    part.type === 'tool-call' ||
    part.type === 'tool-result' ||
    part.type === 'tool-approval-request' ||
    part.type === 'tool-approval-response'
  );
}

/**
 * True when the segments hold tool work that is not finished: a call without a result, or an approval
 * request without a response. Such a turn is always kept.
 */
export function hasUnfinishedToolWork(segments: readonly ContextSegment[]): boolean {
  // Each segment finished on its own (known for a cached segment, which a store's cache hands to every request)
  // leaves nothing open for the next, so the turn is finished.
  if (segments.every(finishedAlone)) return false;
  return unfinished(segments);
}

/** {@link hasUnfinishedToolWork} of the segments at `indices` (a turn's), without a list of them when each is finished alone. */
export function turnHasUnfinishedToolWork(segments: readonly ContextSegment[], indices: readonly number[]): boolean {
  let index = 0;
  while (index < indices.length && finishedAlone(segments[indices[index]!]!)) index += 1;
  return index < indices.length && unfinished(indices.map((at) => segments[at]!));
}

function finishedAlone(segment: ContextSegment): boolean {
  const { messages } = segment;
  if (messages.length === 0) return true;
  const facts = segmentFacts(segment);
  return facts ? (facts.finished ??= !unfinished([{ messages }])) : false;
}

function unfinished(segments: ReadonlyArray<{ readonly messages: readonly ModelMessage[] }>): boolean {
  // Lists, not sets: a turn holds a few ids, and most messages none (this runs over every turn, several times a
  // compaction). An id is listed once, as a set holds it.
  let open: string[] | undefined;
  let approvals: string[] | undefined;
  for (const segment of segments) {
    for (const message of segment.messages) {
      const ids = messageToolIds(message);
      if (ids === noToolIds) continue;
      for (const id of ids.calls) if (!(open ??= []).includes(id)) open.push(id);
      if (open) for (const id of ids.results) removeFrom(open, id);
      for (const request of ids.approvalRequests)
        if (!(approvals ??= []).includes(request.approvalId)) approvals.push(request.approvalId);
      if (approvals) for (const id of ids.approvalResponses) removeFrom(approvals, id);
    }
  }
  return (open?.length ?? 0) > 0 || (approvals?.length ?? 0) > 0;
}

function removeFrom(list: string[], id: string): void {
  const index = list.indexOf(id);
  if (index >= 0) list.splice(index, 1);
}

/** Builds a message segment, counting its messages with the measure. */
export function createMessageSegment({
  messages,
  sequence,
  pinned = false,
  measure,
}: {
  messages: ModelMessage[];
  sequence: number | null;
  pinned?: boolean;
  measure: ContextMeasure;
}): MessageSegment {
  return {
    kind: 'message',
    sequence,
    pinned,
    messages,
    tokens: addTokenTallies(...messages.map((message) => measure.countMessage(message))),
  };
}

/**
 * A copy of the segment with other messages (the same messages with parts removed or replaced, some left out).
 * Its tally is the old one minus the parts that went and plus the parts that came (compared by object), so a
 * stored count is never recounted: only the changed parts are counted, and the result stays exactly what a
 * count of the new messages gives whenever the old tally was exact.
 */
export function withMessages<SEGMENT extends ContextSegment>(
  segment: SEGMENT,
  messages: ModelMessage[],
  measure: ContextMeasure,
): SEGMENT {
  return { ...segment, messages, tokens: retallyMessages(segment.messages, segment.tokens, messages, measure) };
}
