import { DrizzleQueryError } from 'drizzle-orm';
import { AgentHistoryError } from '../errors/agent-history-error.js';
import { DatabaseError } from '../errors/database-error.js';

/** The first string `code` in an error's chain of causes: a SQLSTATE or a driver's or socket's code. */
function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * What a store method throws for `error`: the package's own errors as they are; a failed statement (Drizzle's
 * `DrizzleQueryError`, whose message lists the parameters, message content included) or a lost connection as a
 * {@link DatabaseError} without the parameters; anything else (a bug, an error of a user-supplied token counter)
 * as it is.
 */
export function asStoreError(error: unknown): unknown {
  if (AgentHistoryError.isInstance(error)) return error;
  const failedQuery = error instanceof DrizzleQueryError;
  const origin: unknown = failedQuery ? error.cause : error;
  const databaseCode = codeOf(origin);
  if (!failedQuery && databaseCode === undefined) return error;
  const message = origin instanceof Error ? origin.message : 'the statement failed.';
  return new DatabaseError({ databaseCode, name: origin instanceof Error ? origin.name : 'Error', message });
}

/** Wraps every method of `methods` so that it throws {@link asStoreError}'s errors. */
export function withStoreErrors<METHODS extends object>(methods: METHODS): METHODS {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(methods)) {
    wrapped[name] =
      typeof value === 'function'
        ? async (...args: unknown[]) => {
            try {
              return await (value as (...args: unknown[]) => Promise<unknown>)(...args);
            } catch (error) {
              throw asStoreError(error);
            }
          }
        : value;
  }
  return wrapped as METHODS;
}
