import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { ChatBodyTooLargeError } from './chat-body-too-large-error.js';
import { assertBodyDepth } from './json-nesting-depth.js';

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

/**
 * The body of `request` as JSON, read by {@link readBodyText}; a body that is not JSON, or is nested deeper than the
 * route accepts (checked on the text, before parsing), is `InvalidArgumentError`.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readBodyText(request, limit);
  assertBodyDepth(text);
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidArgumentError({ argument: 'body', value: '…', message: 'expected a JSON body.' });
  }
}
