import { SpanStatusCode, type Span } from '@opentelemetry/api';

/**
 * Marks `span` as failed with the error's code only: `error.type` is the package error's `code`
 * (`thread-not-found`, `database-failed`, …) or the error's class name, and a database failure adds its SQLSTATE
 * as `db.response.status_code`. The message is never recorded: a typed error names the offending value, which may
 * be message content. Internal.
 */
export function recordSpanError(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  const { databaseCode, retryable } = fieldsOf(error);
  const type = errorType(error);
  span.setAttribute('error.type', type);
  if (typeof databaseCode === 'string') span.setAttribute('db.response.status_code', databaseCode);
  if (typeof retryable === 'boolean') span.setAttribute('agent_history.error.retryable', retryable);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/**
 * What `error.type` records for `error`: the package error's `code`, the error's class name, or, for a `Response`
 * thrown by the application's own check (a 401 from `getHistory`), `response-<status>`. Internal.
 */
export function errorType(error: unknown): string {
  if (error instanceof Response) return `response-${error.status}`;
  const { code, name } = fieldsOf(error);
  return typeof code === 'string' ? code : typeof name === 'string' ? name : typeof error;
}

function fieldsOf(error: unknown) {
  return (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    name?: unknown;
    databaseCode?: unknown;
    retryable?: unknown;
  };
}
