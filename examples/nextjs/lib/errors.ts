import { AgentHistoryError, DatabaseSetupError } from 'agent-history';
import { chatErrorResponse, chatErrorStatus } from 'agent-history/ai-sdk';

/** The JSON of a 503: a stable code, what to do about it, and the SQLSTATE or driver code when there is one. */
interface DatabaseProblem {
  code: string;
  message: string;
  databaseCode?: string;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
// Node's socket errors and postgres-js's connection codes: the server is down, unreachable or went away.
const CONNECTION_CODE = /^(E[A-Z]+|CONNECTION_\w+|CONNECT_TIMEOUT)$/;

/**
 * Every error of a route or of the start-up as a response, in one place. What the library answers with a 4xx
 * (unknown or foreign thread, invalid message, conflict, too large) stays as it is. A database failure, whatever
 * raised it (the store's `DatabaseError`, its start-up check's `DatabaseSetupError` or `RowLevelSecurityBypassError`, or a
 * driver's own error from a query of the example), is a 503 with a JSON
 * body that says what is wrong and never the SQL; the error itself goes to the server's log. Anything else is a
 * bug: the library's generic 500.
 */
export function errorResponse(error: unknown): Response {
  if (error instanceof Response) return error;
  if (chatErrorStatus(error) < 500) return chatErrorResponse(error);
  const problem = databaseProblem(error);
  if (problem === undefined) return chatErrorResponse(error);
  // The log gets the error itself (a DatabaseError holds no message content); the start-up check's own says it all.
  console.error(`agent-history example: ${problem.code}:`, error instanceof DatabaseSetupError ? error.message : error);
  return Response.json({ error: problem }, { status: 503, headers: { 'retry-after': '5' } });
}

/** What a database failure means for an operator, or undefined when `error` is not one. */
export function databaseProblem(error: unknown): DatabaseProblem | undefined {
  if (error instanceof DatabaseSetupError) {
    // Its message names each fix: the migration to run as the owner, or the grant to give the login.
    const migrated = !error.problems.some((problem) => problem.code === 'migrations-missing');
    return {
      code: migrated ? 'database-permission-denied' : 'database-not-migrated',
      message: migrated
        ? error.message
        : "The database is not migrated: run `npm run db:migrate` with MIGRATION_DATABASE_URL (the tables' owner).",
    };
  }
  const databaseCode = codeOf(error);
  if (databaseCode === undefined) {
    if (!AgentHistoryError.isInstance(error)) return undefined;
    if (error.code === 'database-failed')
      return { code: 'database-unavailable', message: 'The database is unavailable; try again later.' };
    if (error.code === 'row-level-security-bypassed')
      return {
        code: 'database-login-bypasses-rls',
        message:
          "The app's database login would bypass row-level security (a superuser, BYPASSRLS, or the tables' owner): " +
          'set DATABASE_URL to the NOINHERIT login of examples/nextjs/README.md, "Run it".',
      };
    // Another setup error of the library (a Citus setting, a conflicting migration path, …): its message says which.
    return { code: 'database-not-ready', message: error.message };
  }
  const problem = (code: string, message: string): DatabaseProblem => ({ code, message, databaseCode });
  if (isUnreachable(databaseCode))
    return problem('database-unavailable', 'The database is unavailable; try again later.');
  if (databaseCode.startsWith('28') || databaseCode === '3D000')
    return problem(
      'database-login-refused',
      'The database refused the login of DATABASE_URL (role, password or database).',
    );
  if (databaseCode === '42501')
    return problem(
      'database-permission-denied',
      'The app\'s database login lacks a privilege it needs: grant it what examples/nextjs/README.md, "Run it", says.',
    );
  if (['42P01', '42883', '3F000', '42704'].includes(databaseCode))
    return problem('database-not-migrated', 'The database is not migrated: run `npm run db:migrate` as its owner.');
  return problem('database-failed', 'The database failed the request; the server log says why.');
}

/** The SQLSTATE or connection code of a database error: its own, or that of an error in its `cause` chain. */
function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code =
      (current as { databaseCode?: unknown; code?: unknown }).databaseCode ?? (current as { code?: unknown }).code;
    if (typeof code === 'string' && (SQLSTATE.test(code) || CONNECTION_CODE.test(code))) return code;
  }
  return undefined;
}

/** A lost, refused or timed-out connection, a server shutting down or starting, too many connections. */
function isUnreachable(code: string): boolean {
  return CONNECTION_CODE.test(code) || /^(08...|57P0[1-35]|53300)$/.test(code);
}
