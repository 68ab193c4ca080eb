import { AgentHistoryError, describeValue } from './agent-history-error.js';

/** What a {@link NotFoundError} was looking for. */
export type NotFoundEntity = 'thread' | 'message' | 'run' | 'summary' | 'snapshot' | 'tool-payload';

/**
 * The thread, message or run does not exist for this tenant. Another tenant's row raises exactly the same
 * error as a missing one, so the error is no existence oracle.
 */
export class NotFoundError extends AgentHistoryError {
  /** What kind of row was looked for. */
  readonly entity: NotFoundEntity;
  /** The id that was looked for, as given. */
  readonly id: unknown;
  constructor({ entity, id }: { entity: NotFoundEntity; id: unknown }) {
    super({ code: `${entity}-not-found`, message: `The ${entity} ${describeValue(id)} was not found.` });
    this.entity = entity;
    this.id = id;
  }
}
