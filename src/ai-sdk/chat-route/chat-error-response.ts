import { AgentHistoryError } from '../../errors/agent-history-error.js';
import { DatabaseError } from '../../errors/database-error.js';
import { FileUrlNotAllowedError } from '../../errors/file-url-not-allowed-error.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { InvalidMessageError } from '../../errors/invalid-message-error.js';
import { InvalidTenantError } from '../../errors/invalid-tenant-error.js';
import { MessageTooLargeError } from '../../errors/message-too-large-error.js';
import { NotFoundError } from '../../errors/not-found-error.js';
import { VersionConflictError } from '../../errors/version-conflict-error.js';
import { ChatBodyTooLargeError } from './chat-body-too-large-error.js';
import { ChatConflictError } from '../shared/chat-conflict-error.js';

/** The JSON body of an error response: `{ error: { code, message, … } }`. */
export interface ChatErrorBody {
  /**
   * A stable `code`, a message safe to show, for an invalid message the `path` of the problem (the message is then
   * `path: reason`, without the value), and for a conflict the message and status concerned.
   */
  error: { code: string; message: string; path?: string; messageId?: string; status?: string };
}

/**
 * The HTTP status for an error of this package: 400 invalid message or argument or a refused file URL, 404 unknown or foreign thread
 * or message, 409 conflict (double submit, answer in progress, stale version), 413 message or body too large, 503 the
 * database unreachable for now (a retryable `DatabaseError`), 500 else.
 */
export function chatErrorStatus(error: unknown): number {
  if (error instanceof DatabaseError && error.retryable) return 503;
  if (error instanceof ChatConflictError || error instanceof VersionConflictError) return 409;
  if (error instanceof MessageTooLargeError || error instanceof ChatBodyTooLargeError) return 413;
  if (error instanceof NotFoundError) return 404;
  if (
    error instanceof InvalidMessageError ||
    error instanceof InvalidArgumentError ||
    error instanceof FileUrlNotAllowedError ||
    error instanceof InvalidTenantError
  )
    return 400;
  return 500;
}

/**
 * An error as a JSON `Response` with {@link chatErrorStatus}. The message of a 4xx error (the validation
 * message, the missing id) is sent as it is; a 500 or 503 sends a generic message and logs the error (a
 * `DatabaseError` holds no message content); a 503 also says `Retry-After: 1`.
 *
 * @example
 * try { return (await streamChatTurn(options)).toResponse(); } catch (error) { return chatErrorResponse(error); }
 */
export function chatErrorResponse(
  error: unknown,
  { log = console.error }: { log?: (...values: unknown[]) => void } = {},
): Response {
  const status = chatErrorStatus(error);
  let body: ChatErrorBody;
  if (status >= 500 || !AgentHistoryError.isInstance(error)) {
    log('agent-history: chat request failed', error);
    body =
      status === 503
        ? { error: { code: 'database-unavailable', message: 'The database is unavailable; try again.' } }
        : { error: { code: 'internal-error', message: 'The request failed.' } };
  } else {
    body = { error: { code: error.code, message: error.message } };
    if (error instanceof InvalidMessageError)
      body.error = { code: error.code, message: `${error.path}: ${error.reason}`, path: error.path };
    if (error instanceof ChatConflictError)
      Object.assign(body.error, { messageId: error.messageId, status: error.status });
  }
  return Response.json(body, { status, headers: status === 503 ? { 'retry-after': '1' } : undefined });
}
