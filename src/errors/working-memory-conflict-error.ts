import { AgentHistoryError } from './agent-history-error.js';

/**
 * The working memory changed since the version a writer saw (another step, thread or user session wrote it first).
 * Nothing was written. Its message tells the model the current version and content, so that it can merge its change
 * and write again: the `updateWorkingMemory` tool returns it as the tool's error.
 */
export class WorkingMemoryConflictError extends AgentHistoryError {
  /** The version the writer saw. */
  readonly expectedVersion: number;
  /** The current version (0 when there is no document). */
  readonly actualVersion: number;
  /** The current content ('' when there is no document). */
  readonly currentContent: string;
  constructor({
    expectedVersion,
    actualVersion,
    currentContent,
  }: {
    expectedVersion: number;
    actualVersion: number;
    currentContent: string;
  }) {
    super({
      code: 'working-memory-conflict',
      message:
        `The working memory changed: you passed expectedVersion ${expectedVersion}, but it is now version ` +
        `${actualVersion}. Nothing was written. Merge your change into the current content below and call ` +
        `updateWorkingMemory again with expectedVersion ${actualVersion}.\n\nCurrent content (version ` +
        `${actualVersion}):\n${currentContent}`,
    });
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
    this.currentContent = currentContent;
  }
}
