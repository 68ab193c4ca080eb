import { AgentHistoryError } from '../../errors/agent-history-error.js';
import { VersionConflictError } from '../../errors/version-conflict-error.js';
import type { ContextStore, NewSnapshot } from '../../model/context-store.js';
import { recordWrittenSnapshot, type ContextEngineState } from './context-engine-state.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { ContextSnapshotReport } from '../contracts/context-report.js';

/** Options of {@link writeContextSnapshot}. */
export interface WriteContextSnapshotOptions {
  /** Stores the snapshot. */
  store: Pick<ContextStore, 'writeSnapshot'>;
  /** The engine's state: the snapshot known, updated when this one is written. */
  state: ContextEngineState;
  /** The snapshot ({@link buildSnapshot}). */
  snapshot: NewSnapshot;
  /** `report`: a concurrent writer's version is reported as a `conflict`; `throw`: its error is rethrown. */
  snapshotConflicts: ContextPolicy['snapshotConflicts'];
}

/** The snapshot report of a compaction that writes none. */
export function snapshotNotNeeded(state: Pick<ContextEngineState, 'knownVersion'>): ContextSnapshotReport {
  return { status: 'not-needed', version: state.knownVersion || null, throughSequence: null, messagesHash: null };
}

/**
 * Writes a snapshot unless the context equals the known one (same hash: `unchanged`). A version conflict is
 * reported or rethrown as the policy says; any other error is rethrown.
 */
export async function writeContextSnapshot({
  store,
  state,
  snapshot,
  snapshotConflicts,
}: WriteContextSnapshotOptions): Promise<ContextSnapshotReport> {
  const { throughSequence, messagesHash } = snapshot;
  if (state.knownSnapshot?.messagesHash === messagesHash)
    return {
      status: 'unchanged',
      version: state.knownVersion,
      throughSequence: state.knownSnapshot.throughSequence,
      messagesHash,
    };
  try {
    const written = await store.writeSnapshot(snapshot);
    recordWrittenSnapshot(state, written);
    return { status: 'written', version: written.version, throughSequence, messagesHash };
  } catch (error) {
    if (snapshotConflicts === 'report' && isVersionConflict(error)) {
      return {
        status: 'conflict',
        version: (error as VersionConflictError).actualVersion ?? null,
        throughSequence,
        messagesHash,
      };
    }
    throw error;
  }
}

// A store built on another copy of this package throws its own class; the code identifies the error then.
function isVersionConflict(error: unknown): boolean {
  return (
    error instanceof VersionConflictError || (AgentHistoryError.isInstance(error) && error.code === 'version-conflict')
  );
}
