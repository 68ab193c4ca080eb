import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { ContextMemory } from '../../model/context-store.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { createRecalledSegment } from '../segments/recalled-segment.js';
import { createWorkingMemorySegment } from '../segments/working-memory-segment.js';
import type { MemoryItemSegment } from '../stages/fit-memory-segments.js';
import type { ContextSnapshotPruning } from './context-snapshot-pruning.js';

/** The working memory and recalled items a snapshot's context held, as `rebuildContextFromSnapshot` takes them. */
export type SnapshotMemoryInput = Partial<Pick<ContextMemory, 'workingMemory' | 'recalled'>>;

/**
 * The working memory and recalled segments a snapshot records, in its order, from `memory` (which may hold more).
 * @throws {InvalidArgumentError} when `memory` lacks one of them, or holds it at another version.
 */
export function rebuildMemorySegments({
  pruning,
  memory = {},
  measure,
}: {
  pruning: Pick<ContextSnapshotPruning, 'workingMemory' | 'recalled'>;
  memory?: SnapshotMemoryInput;
  measure: ContextMeasure;
}): MemoryItemSegment[] {
  const segments: MemoryItemSegment[] = [];
  const working = pruning.workingMemory;
  if (working) {
    const given = memory.workingMemory;
    if (given?.id !== working.id || given.version !== working.version)
      throw new InvalidArgumentError({
        argument: 'memory.workingMemory',
        value: given ? { id: given.id, version: given.version } : null,
        message: `expected the snapshot's working memory ${JSON.stringify(working.id)} at version ${working.version}.`,
      });
    segments.push(createWorkingMemorySegment({ workingMemory: given, measure }));
  }
  for (const recorded of pruning.recalled ?? []) {
    const given = memory.recalled?.find((item) => item.id === recorded.id);
    if (given?.sourceContentVersion !== recorded.sourceContentVersion)
      throw new InvalidArgumentError({
        argument: 'memory.recalled',
        value: given ? { id: given.id, sourceContentVersion: given.sourceContentVersion } : null,
        message: `expected the snapshot's recalled item ${JSON.stringify(recorded.id)} at content version ${recorded.sourceContentVersion}.`,
      });
    segments.push(createRecalledSegment({ item: given, measure }));
  }
  return segments;
}
