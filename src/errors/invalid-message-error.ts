import { AgentHistoryError, describeValue } from './agent-history-error.js';

/** A `UIMessage` failed validation (structure, parts, metadata, or the AI SDK's own validation). Nothing was written. */
export class InvalidMessageError extends AgentHistoryError {
  /** Where in the message the problem is: `parts`, `parts[3].type`, `metadata`, … */
  readonly path: string;
  /** The value found there (its type, for a value that is not JSON). */
  readonly value: unknown;
  /** What is wrong, without the path and the value: `expected number, received string`. */
  readonly reason: string;
  constructor({ path, value, message, cause }: { path: string; value: unknown; message: string; cause?: unknown }) {
    super({ code: 'message-invalid', message: `Invalid message ${path} ${describeValue(value)}: ${message}`, cause });
    this.path = path;
    this.value = value;
    this.reason = message;
  }
}
