import { AgentHistoryError, describeValue } from './agent-history-error.js';

/** An argument is malformed: a non-uuid id, a negative limit, an empty search query, a boundary outside the thread. */
export class InvalidArgumentError extends AgentHistoryError {
  /** The argument's name, as a path when nested: `options.limit`, `message.parts[2].type`. */
  readonly argument: string;
  /** The value that was refused. */
  readonly value: unknown;
  constructor({ argument, value, message }: { argument: string; value: unknown; message: string }) {
    super({ code: 'argument-invalid', message: `Invalid ${argument} ${describeValue(value)}: ${message}` });
    this.argument = argument;
    this.value = value;
  }
}
