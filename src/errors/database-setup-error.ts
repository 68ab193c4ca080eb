import { AgentHistoryError } from './agent-history-error.js';

/** What `checkSetup` found wrong, with the fix. */
export interface SetupProblem {
  /**
   * `migrations-missing`: a table or function of the package does not exist. `app-role-missing`: the application
   * role does not exist. `app-role-not-granted`: the login is not a member of it. `schema-not-usable`: the login may
   * not use the tables' schema. `function-not-executable`: the login may not call one of the package's functions.
   * `row-level-security-bypassed`: the role the statements run as would not be held by row-level security.
   */
  code:
    | 'migrations-missing'
    | 'app-role-missing'
    | 'app-role-not-granted'
    | 'schema-not-usable'
    | 'function-not-executable'
    | 'row-level-security-bypassed';
  /** What is wrong, naming the object. */
  message: string;
  /** The SQL that fixes it (run as an administrator or the owner), or the command to run. */
  fix: string;
}

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
