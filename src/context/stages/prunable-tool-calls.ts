import type { ContextSegment, ContextTurn } from '../segments/context-segment.js';
import { turnHasUnfinishedToolWork } from '../segments/context-segment.js';
import { segmentToolCallIds } from '../segments/segment-tool-calls.js';

/**
 * Tool call ids outside the protected turns (newest, pinned, unfinished) that no protected segment uses, in the
 * order they first appear (oldest first).
 */
export function prunableToolCallIds(
  segments: readonly ContextSegment[],
  turns: readonly ContextTurn[],
  keepTurns: number,
  approvalToCall: ReadonlyMap<string, string>,
): Set<string> {
  // One flag per segment, set for the protected ones.
  const protectedAt = new Uint8Array(segments.length);
  for (let position = 0; position < turns.length; position++) {
    const { indices } = turns[position]!;
    if (position >= turns.length - keepTurns || turnHasUnfinishedToolWork(segments, indices))
      for (let index = 0; index < indices.length; index++) protectedAt[indices[index]!] = 1;
  }
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if (segment.kind !== 'message' || segment.pinned) protectedAt[index] = 1;
  }
  const keep = new Set<string>();
  const candidates = new Set<string>();
  for (let index = 0; index < segments.length; index++) {
    const ids = segmentToolCallIds(segments[index]!, approvalToCall);
    const into = protectedAt[index] === 1 ? keep : candidates;
    for (let position = 0; position < ids.length; position++) into.add(ids[position]!);
  }
  for (const id of keep) candidates.delete(id);
  return candidates;
}
