import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { contextMessageRef, ownUnstoredMessage, sameMessage } from '../segments/context-message-ref.js';
import { createMessageSegment, type ContextSegment } from '../segments/context-segment.js';

/** Where a message the engine returned came from: its segment and its position in it. */
export interface MessageProvenance {
  /** The segment that rendered the message. */
  segment: ContextSegment;
  /** The message's index in `segment.messages`. */
  position: number;
}

/**
 * The messages this engine returned, by the reference it put on them ({@link contextMessageRef}), never by
 * identity: a step may get copies of them (`structuredClone`, a JSON round trip), and the registry turns them
 * back into the segments they came from (with their sequences, pins and token counts).
 */
export type ProvenanceRegistry = Map<string, MessageProvenance[]>;

/**
 * Records the referenced messages of `segments` in `registry`, so that {@link parseContextMessages} recognises them.
 * A reference keeps every segment it was returned in, oldest first (a step may be given an earlier return, say after
 * a call asked again with other instructions); the same segment again is recorded once.
 */
export function registerSegments(registry: ProvenanceRegistry, segments: readonly ContextSegment[]): void {
  for (const segment of segments) {
    segment.messages.forEach((message, position) => {
      const ref = contextMessageRef(message);
      if (ref === undefined) return;
      const known = registry.get(ref);
      const newest = known?.[known.length - 1];
      if (!known) registry.set(ref, [{ segment, position }]);
      else if (newest!.segment !== segment || newest!.position !== position) known.push({ segment, position });
    });
  }
}

/** Options of {@link parseContextMessages}. */
export interface ParseContextMessagesOptions {
  /** The messages of a step, as the AI SDK passes them to `prepareStep`. */
  messages: readonly ModelMessage[];
  /** The messages this engine returned before. */
  registry: ProvenanceRegistry;
  /** Counts the messages the engine did not build. */
  measure: ContextMeasure;
}

/** The segment a run of messages starting at `index` reproduces whole and in order (equal by value), if any. */
export function knownSegmentAt(
  messages: readonly ModelMessage[],
  index: number,
  registry: ProvenanceRegistry,
): ContextSegment | undefined {
  const ref = contextMessageRef(messages[index]!);
  const known = ref === undefined ? undefined : registry.get(ref);
  // The newest return first.
  for (let candidate = (known?.length ?? 0) - 1; candidate >= 0; candidate--) {
    const { segment, position } = known![candidate]!;
    if (position === 0 && reproduces(messages, index, segment)) return segment;
  }
  return undefined;
}

function reproduces(messages: readonly ModelMessage[], index: number, segment: ContextSegment): boolean {
  if (index + segment.messages.length > messages.length) return false;
  for (let offset = 0; offset < segment.messages.length; offset++)
    if (!sameMessage(messages[index + offset]!, segment.messages[offset]!)) return false;
  return true;
}

/**
 * Turns a step's messages back into segments: a run of messages the engine returned (or copies of them) becomes
 * its segment again when the whole segment is there, in order and unchanged; any other message becomes a new
 * unstored segment, an assistant message together with the tool messages after it.
 */
export function parseContextMessages({ messages, registry, measure }: ParseContextMessagesOptions): ContextSegment[] {
  const segments: ContextSegment[] = [];
  let index = 0;
  while (index < messages.length) {
    const known = knownSegmentAt(messages, index, registry);
    if (known) {
      segments.push(known);
      index += known.messages.length;
      continue;
    }
    // Not built by this engine (the current request's steps, or messages the caller made), or changed since: an
    // assistant message and the tool messages after it form one segment, so that a call stays with its results.
    // A tool message that begins a segment the engine returned is left to it.
    // A copy of an unstored message the engine changed (a preview) becomes the engine's own message again.
    const own = (message: ModelMessage) => ownUnstoredMessage(message, (ref) => knownMessages(registry, ref));
    const group = [own(messages[index]!)];
    index += 1;
    if (group[0]!.role === 'assistant') {
      while (index < messages.length && messages[index]!.role === 'tool' && !beginsSegment(messages[index]!, registry))
        group.push(own(messages[index++]!));
    }
    segments.push(createMessageSegment({ messages: group, sequence: null, measure }));
  }
  return segments;
}

// Whether the message is the first of a segment the engine returned (by its reference).
function beginsSegment(message: ModelMessage, registry: ProvenanceRegistry): boolean {
  const ref = contextMessageRef(message);
  return ref !== undefined && (registry.get(ref)?.some((known) => known.position === 0) ?? false);
}

// The messages the engine returned under `ref`, newest first.
function knownMessages(registry: ProvenanceRegistry, ref: string): ModelMessage[] {
  const known = registry.get(ref) ?? [];
  const messages: ModelMessage[] = [];
  for (let index = known.length - 1; index >= 0; index--)
    messages.push(known[index]!.segment.messages[known[index]!.position]!);
  return messages;
}
