import type { ModelMessage } from 'ai';
import type { TokenTally } from '../../tokens/count-message-tokens.js';

/**
 * What the stages learn about a frozen segment, kept on the segment itself: a store's cache hands the same frozen
 * segment to every request of a thread, and each stage finds here what it made of it before, without a lookup by
 * identity and without reading its messages again. Each field is filled the first time a stage needs it; the
 * segment and its messages never change, so neither does what is derived from them.
 */
export interface SegmentFacts {
  /** Whether a message has a reasoning part. */
  reasoning?: boolean;
  /** Whether a message has no content. */
  empty?: boolean;
  /** The tool parts' call ids, whether an approval is answered, and the tool-traffic key when all are removed. */
  toolParts?: { ids: string[]; answers: boolean; allKey: string };
  /** The call ids it mentions (`segmentToolCallIds`), or null when they depend on the approval map. */
  callIds?: readonly string[] | null;
  /** Its approval requests, in order. */
  approvalRequests?: ReadonlyArray<{ approvalId: string; toolCallId: string }>;
  /** Whether it leaves no tool work open on its own. */
  finished?: boolean;
  /** Pruned forms, by the decision's flags and tool-traffic key (the pruning's own record). */
  pruned?: Array<Map<string, unknown> | undefined>;
  /** The pruned form made or found last (the next request of a thread decides the same for most segments). */
  lastPruned?: unknown;
  /** The references its messages get when returned (`markSegments`), by position. */
  refs?: string[];
}

const FACTS = Symbol('agent-history.segmentFacts');

// What `freezeSegment` reads of a message segment, written out here: context-segment.ts imports this file, so this
// file does not import the segment types back.
type FreezableSegment = { readonly messages: readonly ModelMessage[]; readonly tokens: TokenTally };

/**
 * Freezes a message segment whose message array is frozen (with its tallies) and gives it its own
 * {@link SegmentFacts}; any other segment is returned as it is. The facts are not enumerable: copies (`{ ...segment }`, `structuredClone`, JSON) never
 * carry them, and a copy is never frozen with them.
 */
export function freezeSegment<SEGMENT extends FreezableSegment>(segment: SEGMENT): SEGMENT {
  if (Object.isFrozen(segment) || !Object.isFrozen(segment.messages)) return segment;
  Object.defineProperty(segment, FACTS, { value: {}, enumerable: false });
  Object.freeze(segment.tokens);
  return Object.freeze(segment);
}

/** The facts of a segment {@link freezeSegment} froze; undefined for any other. */
export function segmentFacts(segment: { readonly messages: readonly ModelMessage[] }): SegmentFacts | undefined {
  return (segment as { [FACTS]?: SegmentFacts })[FACTS];
}
