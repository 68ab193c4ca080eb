import { AgentHistoryError } from '../../../src/errors/agent-history-error.js';

/**
 * Driver and server conditions a client may see when its connection or the server goes away: SQLSTATE classes
 * 08 (connection exception) and 57 (operator intervention: admin shutdown, crash shutdown, cannot connect now),
 * 53300 (too many connections, while terminated backends are still being reaped),
 * postgres-js / Node socket codes, and `CALL_HUNG` (a call the test gave up on, see `withDeadline`).
 */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'CALL_HUNG',
]);

/**
 * What kind of failure a store call ended in: `typed:<code>` for the package's own errors, `connection:<code>`
 * for a lost connection or server, or null when the failure is neither (an unclear error: a violation).
 */
export function classifyFailure(error: unknown): string | null {
  // A DatabaseError is the store's wrapper of a lost connection or a failed statement: classified by its code.
  if (AgentHistoryError.isInstance(error) && error.code !== 'database-failed') return `typed:${error.code}`;
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (/^(08|57)[0-9A-Z]{3}$/.test(code) || code === '53300' || CONNECTION_CODES.has(code))
        return `connection:${code}`;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** A short description of any error, for a violation's detail. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return `${error.name} ${(error as { code?: string }).code ?? ''}: ${error.message.slice(0, 160)}${cause ? ` (cause: ${describeError(cause)})` : ''}`;
  }
  return String(error);
}
