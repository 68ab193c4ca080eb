import type { ModelMessage } from 'ai';
import { segmentFacts } from './segment-facts.js';
import { messageToolIds, type ContextSegment } from './context-segment.js';

/**
 * The key of the reference the engine puts on every message it builds from the store (a stored message's model
 * messages, the summary, the memory message). It is a top-level string, so it survives `structuredClone` and a
 * JSON round trip, and the AI SDK never sends it: its prompt conversion copies only `role`, `content` and
 * `providerOptions` of each message. It is not part of the snapshot hash.
 */
export const contextMessageRefKey = 'agentHistoryRef';

/** A message with the engine's reference. */
type RefMessage = ModelMessage & { [contextMessageRefKey]?: unknown };

/** The reference of a message the engine built, or undefined. */
export function contextMessageRef(message: ModelMessage): string | undefined {
  const ref = (message as RefMessage)[contextMessageRefKey];
  return typeof ref === 'string' ? ref : undefined;
}

/**
 * The message with the reference `ref`, and a content array of its own (the same parts): the message it copies may
 * be kept past this request (a store's cache, a pruned form made once per cached message), and a caller that adds to
 * or removes from the returned content must not change it.
 */
export function withContextMessageRef<MESSAGE extends ModelMessage>(message: MESSAGE, ref: string): MESSAGE {
  const { content } = message;
  return { ...message, ...(Array.isArray(content) ? { content: [...content] } : {}), [contextMessageRefKey]: ref };
}

/** The message without the engine's reference (the same object when it has none). */
export function withoutContextMessageRef(message: ModelMessage): ModelMessage {
  if (!(contextMessageRefKey in message)) return message;
  const { [contextMessageRefKey]: _ref, ...rest } = message as RefMessage;
  return rest as ModelMessage;
}

/**
 * Whether two messages are equal by value: the same object, or a copy (`structuredClone`, a JSON round trip: a
 * key holding `undefined` equals a missing key, binary data its base64 or a URL its text are not taken as equal).
 * Identity short-cuts every level, so a shallow copy compares in time proportional to its own keys.
 */
export function sameMessage(a: ModelMessage, b: ModelMessage): boolean {
  return deepEqual(a, b);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!deepEqual(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array && b instanceof Uint8Array) || a.length !== b.length) return false;
    return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  }
  if (a instanceof URL || b instanceof URL || a instanceof Date || b instanceof Date)
    return a.constructor === b.constructor && String(a) === String(b);
  const recordA = a as Record<string, unknown>;
  const recordB = b as Record<string, unknown>;
  const keysA = Object.keys(recordA).filter((key) => recordA[key] !== undefined);
  const keysB = Object.keys(recordB).filter((key) => recordB[key] !== undefined);
  if (keysA.length !== keysB.length) return false;
  for (const key of keysA) if (!deepEqual(recordA[key], recordB[key])) return false;
  return true;
}

/**
 * The reference a segment's message gets when the engine returns it, or undefined for a message of an unstored
 * segment, unless `unstored` marks it (one the engine changed): it is then known by its first tool call's id, which
 * is unique in a request.
 */
function refFor(
  segment: ContextSegment,
  message: ModelMessage,
  position: number,
  unstored: ((message: ModelMessage) => boolean) | undefined,
): string | undefined {
  if (segment.kind === 'summary') return `summary:${segment.summaryId}:${position}`;
  if (segment.kind === 'memory') return `memory:${segment.sequences.join(',')}:${position}`;
  if (segment.kind === 'working-memory')
    return `working-memory:${segment.workingMemory.id}:${segment.workingMemory.version}:${position}`;
  if (segment.kind === 'recalled')
    return `recalled:${segment.item.id}:${segment.item.sourceContentVersion}:${position}`;
  if (segment.sequence !== null) {
    // A cached segment's references are made once (a thread's next request marks the same segments again).
    const facts = segmentFacts(segment);
    if (!facts) return `${segment.sequence}:${position}`;
    const refs = (facts.refs ??= []);
    return (refs[position] ??= `${segment.sequence}:${position}`);
  }
  if (!unstored?.(message)) return undefined;
  const ids = messageToolIds(message);
  const call = ids.calls[0] ?? ids.results[0];
  return call === undefined ? undefined : `step:${call}:${position}`;
}

/**
 * The segments as the engine returns them: every message built from the store (a stored message's model
 * messages, the summary, the memory message) carries a reference, so that a step's copy of it is recognised.
 * A message that has one keeps it; the copy made for one without is made once per message object and reference in
 * `copies` (the engine's, made afresh at each load of the thread: a cached message is the same object in every
 * request, and a caller's change to the copy one request got must not reach the next), so the same context returns
 * the same objects. Unstored messages (the request's own steps) are left as they are,
 * but those `unstored` marks (one holding a preview the engine made): a step's copy of one is then taken back as
 * the engine's own message, and a preview in it is cut again from the original, as the object itself would be.
 */
export function markSegments(
  segments: readonly ContextSegment[],
  copies: MarkedCopies,
  unstored?: (message: ModelMessage) => boolean,
): ContextSegment[] {
  // Copies of an earlier compaction of the load are looked up; those made now are listed (a request that ends after
  // its first compaction never looks them up).
  const earlier = copiesOf(copies);
  return segments.map((segment) => {
    let changed = false;
    const messages = segment.messages.map((message, position) => {
      if (contextMessageRef(message) !== undefined) return message;
      const ref = refFor(segment, message, position, unstored);
      if (ref === undefined) return message;
      // One copy per message object and reference: a message a cache hands out again may sit elsewhere now.
      let marked = earlier?.get(message);
      if (!marked || contextMessageRef(marked) !== ref) {
        marked = withContextMessageRef(message, ref);
        copies.made.push(message, marked);
      }
      changed = true;
      return marked;
    });
    return changed ? { ...segment, messages } : segment;
  });
}

/**
 * The copies {@link markSegments} made in one load of the thread, per message object: `made` lists them in pairs
 * (message, copy), in the order made, until a later compaction of the load looks them up.
 */
export interface MarkedCopies {
  /** The copies by message, once looked up. */
  byMessage: Map<ModelMessage, ModelMessage> | undefined;
  /** Message, copy, message, copy… made since. */
  made: ModelMessage[];
}

/** An empty set of marked copies, for a new load of the thread. */
export function createMarkedCopies(): MarkedCopies {
  return { byMessage: undefined, made: [] };
}

// The copies made so far by message (the later one of a message wins), or undefined when none was made.
function copiesOf(copies: MarkedCopies): Map<ModelMessage, ModelMessage> | undefined {
  if (copies.made.length > 0) {
    const byMessage = (copies.byMessage ??= new Map());
    for (let index = 0; index < copies.made.length; index += 2)
      byMessage.set(copies.made[index]!, copies.made[index + 1]!);
    copies.made = [];
  }
  return copies.byMessage;
}

/**
 * The engine's own message for a step's copy of an unstored message it marked (`markSegments`' `unstored`): the
 * first of those it returned under the copy's reference (`known`, newest first) that the copy equals; the message
 * itself when none.
 */
export function ownUnstoredMessage(
  message: ModelMessage,
  known: (ref: string) => readonly ModelMessage[],
): ModelMessage {
  const ref = contextMessageRef(message);
  if (ref === undefined || !ref.startsWith('step:')) return message;
  return known(ref).find((own) => sameMessage(message, own)) ?? message;
}
