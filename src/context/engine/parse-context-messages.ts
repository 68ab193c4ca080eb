import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { createMessageSegment, type ContextSegment } from '../segments/context-segment.js';

/** Where a message the engine returned came from: its segment and its position in it. */
export interface MessageProvenance {
  /** The segment that rendered the message. */
  segment: ContextSegment;
  /** The message's index in `segment.messages`. */
  position: number;
}

/**
 * The messages the engine returned, by identity. AI SDK v7 hands them back on the next step, and the registry
 * turns them back into the segments they came from (with their sequences, pins and token counts).
 */
export type ProvenanceRegistry = WeakMap<ModelMessage, MessageProvenance>;

/** Records the messages of `segments` in `registry`, so that {@link parseContextMessages} recognises them. */
export function registerSegments(registry: ProvenanceRegistry, segments: readonly ContextSegment[]): void {
  for (const segment of segments) {
    if (segment.messages.length > 0 && registry.get(segment.messages[0]!)?.segment === segment) continue;
    segment.messages.forEach((message, position) => registry.set(message, { segment, position }));
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

/**
 * Turns a step's messages back into segments: a run of messages the engine returned becomes its segment again
 * (when the whole segment is there, in order); any other message becomes a new unstored segment, an assistant
 * message together with the tool messages after it.
 */
export function parseContextMessages({ messages, registry, measure }: ParseContextMessagesOptions): ContextSegment[] {
  const segments: ContextSegment[] = [];
  let index = 0;
  while (index < messages.length) {
    const known = registry.get(messages[index]!);
    if (
      known &&
      known.position === 0 &&
      known.segment.messages.every((message, offset) => messages[index + offset] === message)
    ) {
      segments.push(known.segment);
      index += known.segment.messages.length;
      continue;
    }
    // Not built by this engine (the current request's steps, or messages the caller made): an assistant
    // message and the tool messages after it form one segment, so that a call stays with its results.
    const group = [messages[index]!];
    index += 1;
    if (group[0]!.role === 'assistant') {
      while (index < messages.length && messages[index]!.role === 'tool' && !registry.has(messages[index]!))
        group.push(messages[index++]!);
    }
    segments.push(createMessageSegment({ messages: group, sequence: null, measure }));
  }
  return segments;
}
