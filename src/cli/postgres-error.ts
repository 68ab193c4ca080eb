/** The fields of a server error that postgres.js and node-postgres both carry. */
interface ServerError {
  message: string;
  code?: string;
  detail?: string;
  hint?: string;
  where?: string;
}

/** The error in `error`'s chain of causes that came from the server (a five-character SQLSTATE), if any. */
export function serverErrorOf(error: unknown): ServerError | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (current instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The statement Drizzle's error says failed (`DrizzleQueryError.query`), if any. */
export function failedStatementOf(error: unknown): string | undefined {
  const query = (error as { query?: unknown })?.query;
  return typeof query === 'string' ? query : undefined;
}

/**
 * The lines that describe a failure: Postgres's message, code, detail, hint and context when the server refused a
 * statement; otherwise the error's own message (and code: `ECONNREFUSED`, …). Never the statement's parameters.
 */
export function describeFailure(error: unknown): string[] {
  const server = serverErrorOf(error);
  if (server) {
    return [
      `error: ${server.message}`,
      ...(server.code ? [`code: ${server.code}`] : []),
      ...(server.detail ? [`detail: ${server.detail}`] : []),
      ...(server.hint ? [`hint: ${server.hint}`] : []),
      ...(server.where ? [`context: ${server.where.split('\n')[0]}`] : []),
    ];
  }
  const cause = (error as { cause?: unknown })?.cause;
  const origin = failedStatementOf(error) !== undefined && cause instanceof Error ? cause : error;
  const code = (origin as { code?: unknown })?.code;
  return [
    `error: ${origin instanceof Error ? origin.message : String(origin)}`,
    ...(typeof code === 'string' ? [`code: ${code}`] : []),
  ];
}

/** Whether `error` came from the database or the connection (a code in its chain, or Drizzle's failed query). */
export function isDatabaseFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if (typeof (current as { code?: unknown }).code === 'string' || failedStatementOf(current) !== undefined)
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
