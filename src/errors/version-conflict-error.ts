import { AgentHistoryError } from './agent-history-error.js';

/**
 * A write expected a version that is no longer current (a concurrent writer won). Nothing was written and
 * nothing was overwritten: reload and retry.
 */
export class VersionConflictError extends AgentHistoryError {
  /** What was versioned: 'snapshot'. */
  readonly entity: string;
  /** The version the writer read and expected to still be current. */
  readonly expectedVersion: number;
  /** The current version, when it is known (undefined when a concurrent insert won the race). */
  readonly actualVersion: number | undefined;
  constructor({
    entity,
    expectedVersion,
    actualVersion,
  }: {
    entity: string;
    expectedVersion: number;
    actualVersion?: number;
  }) {
    super({
      code: 'version-conflict',
      message: `Stale ${entity} version: expected ${expectedVersion}, but the current version is ${actualVersion ?? 'newer'}.`,
    });
    this.entity = entity;
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}
