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

/**
 * The body of `request` as text, read chunk by chunk: a declared `Content-Length` over `limit`, or more than
 * `limit` bytes read, cancels the stream and throws {@link ChatBodyTooLargeError}, so that at most `limit` bytes
 * (plus one chunk) are ever held.
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) throw new ChatBodyTooLargeError({ byteSize: declared, limit });
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw new ChatBodyTooLargeError({ byteSize: total, limit });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
