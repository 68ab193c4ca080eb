import { DrizzleQueryError } from 'drizzle-orm';
import { AgentHistoryError } from '../errors/agent-history-error.js';
import { DatabaseError, isDatabaseCode } from '../errors/database-error.js';

/**
 * Drizzle's error for a failed statement, whose message is `Failed query: … params: …`. Also recognised by shape,
 * for an application that bundles a second copy of drizzle-orm (the class is then another one).
 */
function isFailedQuery(error: unknown): error is Error & { cause?: unknown } {
  return (
    error instanceof DrizzleQueryError ||
    (error instanceof Error && 'query' in error && 'params' in error && error.message.startsWith('Failed query:'))
  );
}

/** The error in `error`'s chain of causes that carries a SQLSTATE or a connection code. */
function coded(error: unknown): (Error & { code: string }) | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (current instanceof Error && isDatabaseCode((current as { code?: unknown }).code))
      return current as Error & { code: string };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * What a store method throws for `error`: the package's own errors as they are; a failed statement (Drizzle's
 * error lists the statement's parameters, message content included) or a lost connection as a
 * {@link DatabaseError} that keeps only the code and the server's or driver's message; anything else (a bug, an
 * error of a user-supplied token counter) as it is.
 */
export function asStoreError(error: unknown): unknown {
  if (AgentHistoryError.isInstance(error)) return error;
  const origin = coded(error);
  if (!origin && !isFailedQuery(error)) return error;
  // The driver's error: the coded one, or what Drizzle's error wraps ("PGlite is closed" has no code).
  const source = origin ?? (error as { cause?: unknown }).cause;
  // Never a message that lists parameters: Drizzle's own, or a wrapper's that repeats it.
  const message =
    source instanceof Error && !source.message.startsWith('Failed query:') ? source.message : 'the statement failed.';
  // The server's hint (the fix it suggests: a role to create, a grant to give), never its detail (row values).
  const hint = (origin as { hint?: unknown } | undefined)?.hint;
  return new DatabaseError({
    databaseCode: origin?.code,
    name: source instanceof Error ? source.name : 'Error',
    message: typeof hint === 'string' && hint !== '' ? `${message} (hint: ${hint})` : message,
  });
}

/** A rejection with {@link asStoreError}'s error, for a promise's `.catch`. */
export const rejectAsStoreError = (error: unknown): Promise<never> => Promise.reject(asStoreError(error));

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
