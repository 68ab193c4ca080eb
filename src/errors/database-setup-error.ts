import { AgentHistoryError } from './agent-history-error.js';
import type { SetupProblem } from '../store/check-setup.js';

/**
 * The database is not set up for the store's login: the migrations did not run, the application role is missing
 * or not granted to the login, or the login may not call the package's functions. Each problem names the SQL (or
 * the command) that fixes it. Thrown by the store's first call (or `ready()`), before anything is read or written.
 */
export class DatabaseSetupError extends AgentHistoryError {
  /** The login the store connects as (`current_user` before any role switch). */
  readonly login: string;
  /** What is missing, each with its fix. */
  readonly problems: SetupProblem[];

  constructor({ login, problems }: { login: string; problems: SetupProblem[] }) {
    super({
      code: 'database-setup-incomplete',
      message:
        `The database is not set up for the login ${JSON.stringify(login)}: ` +
        problems.map((problem) => `${problem.message} Fix: ${problem.fix}`).join(' '),
    });
    this.login = login;
    this.problems = problems;
  }
}
