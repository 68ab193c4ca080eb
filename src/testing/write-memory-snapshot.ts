import { assertInteger } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { SnapshotBoundaryError } from '../errors/snapshot-boundary-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import type { ContextSnapshot, NewSnapshot } from '../model/context-store.js';
import { currentVersion, lastSequence, strip, type MemoryContextState } from './memory-context-state.js';

/**
 * The in-memory `writeSnapshot`: writes snapshot `expectedVersion + 1`, or throws {@link VersionConflictError}
 * and writes nothing; a snapshot is never overwritten. As in the Postgres store, its summary must be one of the
 * thread's, and a stale summary makes the snapshot stale, and the
 * boundary may not go back below the previous (not stale) snapshot's ({@link SnapshotBoundaryError}).
 */
export async function writeMemorySnapshot(state: MemoryContextState, input: NewSnapshot): Promise<ContextSnapshot> {
  await Promise.resolve();
  const last = lastSequence(state);
  assertInteger('snapshot.throughSequence', input.throughSequence, 0, last);
  if (input.includedSequences.some((sequence) => !Number.isSafeInteger(sequence) || sequence < 1 || sequence > last)) {
    throw new InvalidArgumentError({
      argument: 'snapshot.includedSequences',
      value: input.includedSequences,
      message: `expected sequences from 1 to ${last}.`,
    });
  }
  const summary = input.summaryId ? state.summaries.find((candidate) => candidate.id === input.summaryId) : undefined;
  if (input.summaryId && !summary) throw new NotFoundError({ entity: 'summary', id: input.summaryId });
  // Last, as the Postgres store: a bad input is reported as such even when the version is stale too.
  const actualVersion = currentVersion(state);
  if (input.expectedVersion !== actualVersion)
    throw new VersionConflictError({ entity: 'snapshot', expectedVersion: input.expectedVersion, actualVersion });
  const previous = [...state.snapshots].reverse().find((candidate) => !candidate.stale);
  if (previous && input.throughSequence < previous.throughSequence)
    throw new SnapshotBoundaryError({
      throughSequence: input.throughSequence,
      previousThroughSequence: previous.throughSequence,
      previousVersion: previous.version,
    });
  const snapshot: ContextSnapshot & { stale: boolean } = {
    id: state.generateId('snapshot'),
    version: actualVersion + 1,
    throughSequence: input.throughSequence,
    summaryId: input.summaryId ?? null,
    includedSequences: structuredClone(input.includedSequences),
    pruned: structuredClone(input.pruned ?? []),
    budget: structuredClone(input.budget ?? {}),
    policyVersion: input.policyVersion,
    messagesHash: input.messagesHash,
    stepNumber: input.stepNumber ?? null,
    stale: summary?.stale ?? false,
  };
  state.snapshots.push(snapshot);
  return strip(snapshot, 'stale');
}
