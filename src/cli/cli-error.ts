/**
 * A failure the command explains itself: its message is printed as it is (no stack), and the process exits with
 * `exitCode`: 2 for a command line that cannot run (an unknown option, a missing value), 1 for a run that failed.
 */
export class CliError extends Error {
  /** The process's exit code. */
  readonly exitCode: 1 | 2;
  constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
