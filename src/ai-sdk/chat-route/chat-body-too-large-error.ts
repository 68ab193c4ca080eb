import { AgentHistoryError } from '../../errors/agent-history-error.js';

/**
 * A chat request's body is larger than the handler's `maxBodyBytes`: refused before it is parsed (as soon as its
 * `Content-Length`, or the bytes read so far, pass the limit), so before authentication. HTTP 413. Nothing written.
 */
export class ChatBodyTooLargeError extends AgentHistoryError {
  /** The bytes declared or read when the request was refused (at least `limit + 1`). */
  readonly byteSize: number;
  /** The handler's `maxBodyBytes`. */
  readonly limit: number;
  constructor({ byteSize, limit }: { byteSize: number; limit: number }) {
    super({
      code: 'body-too-large',
      message: `The request body is over the limit of ${limit} bytes (${byteSize} bytes or more).`,
    });
    this.byteSize = byteSize;
    this.limit = limit;
  }
}
