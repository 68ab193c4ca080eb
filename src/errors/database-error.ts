import { AgentHistoryError } from './agent-history-error.js';

/**
 * postgres-js's and Node's codes for a connection that failed or went away, and whether the same call may succeed
 * if made again: not after CONNECTION_ENDED / CONNECTION_DESTROYED, which mean the application ended its pool.
 */
const CONNECTION_CODES = new Map([
  ['CONNECTION_CLOSED', true],
  ['CONNECT_TIMEOUT', true],
  ['ECONNREFUSED', true],
  ['ECONNRESET', true],
  ['EPIPE', true],
  ['ETIMEDOUT', true],
  ['EHOSTUNREACH', true],
  ['ENETUNREACH', true],
  ['EAI_AGAIN', true],
  ['CONNECTION_ENDED', false],
  ['CONNECTION_DESTROYED', false],
]);

/**
 * SQLSTATEs after which the same call may succeed: a connection lost (class 08), a server shutting down or
 * restarting (57P01–57P03), a session or statement timed out or cancelled (57P05, 25P03, 57014), too many
 * connections (53300), a serialization failure or deadlock (40001, 40P01), a lock not granted (55P03).
 */
const RETRYABLE_SQLSTATE = /^(08...|57P0[1-35]|25P03|57014|53300|40001|40P01|55P03)$/;
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Whether `code` is a SQLSTATE or a connection code: what a {@link DatabaseError} is made from. Internal. */
export function isDatabaseCode(code: unknown): code is string {
  return typeof code === 'string' && (SQLSTATE.test(code) || CONNECTION_CODES.has(code));
}

/**
 * The database failed a statement, or the connection to it was lost: a terminated backend, a server shutting
 * down, a timeout, a serialization failure, a schema migrated without one of the package's migrations. Bad input
 * never ends here: it is refused with a typed error before any SQL runs.
 *
 * The message gives the code and the server's or driver's message, never the statement's parameters, which hold
 * message content that must not reach logs. `cause` keeps only the original error's name, code and message.
 */
export class DatabaseError extends AgentHistoryError {
  /** The SQLSTATE (`57P01`, `40001`, …) or the driver's code (`CONNECTION_CLOSED`, `ECONNRESET`, …), when known. */
  readonly databaseCode: string | undefined;
  /**
   * Whether making the same call again may succeed (a lost connection, a restart, a timeout, a serialization failure,
   * a lock not granted), decided by the code: a driver that reports a lost connection without one (node-postgres's
   * "Connection terminated") gives false. Whether retrying is safe depends on the call: see docs/store.md,
   * "DatabaseError".
   */
  readonly retryable: boolean;

  constructor({ databaseCode, name, message }: { databaseCode: string | undefined; name: string; message: string }) {
    super({
      code: 'database-failed',
      message: `The database failed${databaseCode ? ` (${databaseCode})` : ''}: ${message}`,
      cause: Object.assign(new Error(message), { name, code: databaseCode }),
    });
    this.databaseCode = databaseCode;
    this.retryable =
      databaseCode !== undefined && (CONNECTION_CODES.get(databaseCode) ?? RETRYABLE_SQLSTATE.test(databaseCode));
  }
}
