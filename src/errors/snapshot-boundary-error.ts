import { AgentHistoryError } from './agent-history-error.js';

/**
 * A snapshot's boundary (`throughSequence`) went back below the previous snapshot's: the tail starts after the
 * boundary, so a lower one would send again messages a summary already covers. Boundaries only advance; nothing
 * was written. The previous snapshot is the newest one a load uses (not stale).
 */
export class SnapshotBoundaryError extends AgentHistoryError {
  /** The boundary that was refused. */
  readonly throughSequence: number;
  /** The previous snapshot's boundary. */
  readonly previousThroughSequence: number;
  /** The previous snapshot's version. */
  readonly previousVersion: number;
  constructor({
    throughSequence,
    previousThroughSequence,
    previousVersion,
  }: {
    throughSequence: number;
    previousThroughSequence: number;
    previousVersion: number;
  }) {
    super({
      code: 'snapshot-boundary-backwards',
      message: `Snapshot boundary ${throughSequence} goes back below the boundary ${previousThroughSequence} of snapshot version ${previousVersion}: a boundary only advances.`,
    });
    this.throughSequence = throughSequence;
    this.previousThroughSequence = previousThroughSequence;
    this.previousVersion = previousVersion;
  }
}
