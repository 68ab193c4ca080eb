import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { withMessages, type ContextSegment } from '../segments/context-segment.js';

/** A round the trim dropped: the stored message it was in and {@link roundKey} of its assistant message. */
export interface DroppedRound {
  /** The stored message's sequence. */
  sequence: number;
  /** The round's key. */
  key: string;
}

/** A stored message whose reasoning the trim removed: all of it, or all but its last assistant message's. */
export interface TrimmedReasoning {
  /** The stored message's sequence. */
  sequence: number;
  /** Whether the reasoning of the message's last assistant message was kept. */
  exceptLast: boolean;
}

/** The context after a shrink step, with what the step removed. */
export interface ShrinkResult {
  /** The segments after the step. */
  segments: ContextSegment[];
  /** What was removed, in estimated tokens. */
  removed: ContextRemoval[];
  /** Stored messages whose reasoning went, for the snapshot. */
  reasoning: TrimmedReasoning[];
  /** Stored rounds dropped, for the snapshot. */
  rounds: DroppedRound[];
}

const isReasoning = (type: string) => type === 'reasoning' || type === 'reasoning-file';

/**
 * Removes the reasoning of every assistant message of the segments `within` accepts, except `keep` (the last
 * assistant message of the context: the provider may need the newest reasoning to continue a tool loop). An
 * assistant message left empty goes; a segment left without messages stays, empty, so that indices stay valid
 * (the trim removes empty segments at the end). Tool calls, results and approvals are untouched.
 */
export function stripReasoning(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: (index: number) => boolean,
  keep: ModelMessage | undefined,
): ShrinkResult {
  const removed: ContextRemoval[] = [];
  const reasoning: TrimmedReasoning[] = [];
  const result = segments.flatMap((segment, index): ContextSegment[] => {
    if (segment.kind !== 'message' || !within(index)) return [segment];
    const messages = removeReasoning(segment.messages, keep);
    if (messages === segment.messages) return [segment];
    const shrunk = withMessages(segment, messages, measure);
    removed.push({
      sequence: segment.sequence,
      reason: 'reasoning-pruned',
      tokens: measure.estimate(segment.tokens) - measure.estimate(shrunk.tokens),
    });
    if (segment.sequence !== null)
      reasoning.push({ sequence: segment.sequence, exceptLast: keep !== undefined && segment.messages.includes(keep) });
    return [shrunk];
  });
  return { segments: result, removed, reasoning, rounds: [] };
}

/** The messages without the reasoning of any assistant message but `keep`; the same array when nothing changed. */
export function removeReasoning(messages: ModelMessage[], keep: ModelMessage | undefined): ModelMessage[] {
  let changed = false;
  const result = messages.flatMap((message): ModelMessage[] => {
    if (message === keep || message.role !== 'assistant' || typeof message.content === 'string') return [message];
    const content = message.content.filter((part) => !isReasoning(part.type));
    if (content.length === message.content.length) return [message];
    changed = true;
    return content.length > 0 ? [{ ...message, content }] : [];
  });
  return changed ? result : messages;
}

/**
 * Drops whole rounds (an assistant message with the tool messages that answer it) of the segments `within`
 * accepts, oldest first, while `over(saved)` holds. A round holds its calls with their results and its approval
 * requests with their responses, so nothing is split, even when its tool messages begin the next segment. User
 * messages (the newest input, steering messages) stay, and so does the round of `keep`. A segment left without
 * messages stays, empty (see {@link stripReasoning}).
 */
export function dropRounds(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: (index: number) => boolean,
  over: (saved: number) => boolean,
  keep?: ModelMessage,
): ShrinkResult {
  const removed: ContextRemoval[] = [];
  const rounds: DroppedRound[] = [];
  let saved = 0;
  const result: ContextSegment[] = [];
  // A round goes on into the next segment when that one begins with tool messages (results the AI SDK added after
  // the stored message whose calls they answer, say): they go with it.
  let dropping = false;
  for (const [index, segment] of segments.entries()) {
    const continued = dropping && segment.kind === 'message' && segment.messages[0]?.role === 'tool';
    if (segment.kind !== 'message' || (!continued && (!within(index) || !over(saved)))) {
      dropping = false;
      result.push(segment);
      continue;
    }
    const kept: ModelMessage[] = [];
    if (!continued) dropping = false;
    for (const message of segment.messages) {
      if (message.role === 'assistant') {
        dropping = message !== keep && over(saved);
        if (dropping && segment.sequence !== null) rounds.push({ sequence: segment.sequence, key: roundKey(message) });
      } else if (message.role !== 'tool') dropping = false;
      if (!dropping) {
        kept.push(message);
        continue;
      }
      const tokens = measure.estimate(measure.countMessage(message));
      saved += tokens;
      removed.push({ sequence: segment.sequence, reason: 'round-trimmed', tokens });
    }
    result.push(kept.length === segment.messages.length ? segment : withMessages(segment, kept, measure));
  }
  return { segments: result, removed, reasoning: [], rounds };
}

/**
 * What identifies a round's assistant message across steps and rebuilds: the ids of its tool calls and results,
 * or, for a round without tools, a hash of its content without reasoning (neither changes when reasoning is
 * removed or a payload is previewed).
 */
export function roundKey(message: ModelMessage): string {
  if (typeof message.content === 'string') return `text:${hash(message.content)}`;
  const ids = message.content.flatMap((part) =>
    part.type === 'tool-call' || part.type === 'tool-result' ? [part.toolCallId] : [],
  );
  if (ids.length > 0) return `tools:${[...new Set(ids)].join(',')}`;
  return `text:${hash(JSON.stringify(message.content.filter((part) => !isReasoning(part.type))))}`;
}

/**
 * Applies recorded trims to a rebuilt context: the reasoning removals, then the round drops, as
 * {@link stripReasoning} and {@link dropRounds} made them.
 */
export function applyRecordedShrinks(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  reasoning: readonly TrimmedReasoning[],
  rounds: readonly DroppedRound[],
): ContextSegment[] {
  const modes = new Map<number, boolean>();
  for (const entry of reasoning) modes.set(entry.sequence, (modes.get(entry.sequence) ?? true) && entry.exceptLast);
  const dropped = new Set(rounds.map((round) => `${round.sequence}\u0000${round.key}`));
  // A round's key hashes its message: made only for the messages a dropped round was recorded for.
  const droppedSequences = new Set(rounds.map((round) => round.sequence));
  return segments.flatMap((segment): ContextSegment[] => {
    if (segment.kind !== 'message' || segment.sequence === null) return [segment];
    const sequence = segment.sequence;
    if (!modes.has(sequence) && !droppedSequences.has(sequence)) return [segment];
    let messages = segment.messages;
    if (modes.has(sequence)) {
      const keep = modes.get(sequence)
        ? segment.messages.findLast((message) => message.role === 'assistant')
        : undefined;
      messages = removeReasoning(messages, keep);
    }
    if (!droppedSequences.has(sequence)) {
      if (messages === segment.messages) return [segment];
      return messages.length > 0 ? [withMessages(segment, messages, measure)] : [];
    }
    let dropping = false;
    const kept = messages.filter((message) => {
      if (message.role === 'assistant') dropping = dropped.has(`${sequence}\u0000${roundKey(message)}`);
      else if (message.role !== 'tool') dropping = false;
      return !dropping;
    });
    if (kept.length === segment.messages.length && messages === segment.messages) return [segment];
    return kept.length > 0 ? [withMessages(segment, kept, measure)] : [];
  });
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}
