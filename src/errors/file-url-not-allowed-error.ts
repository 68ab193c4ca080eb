import { AgentHistoryError, describeValue } from './agent-history-error.js';

/**
 * An incoming message holds a file part whose URL the server would download (`http:`, `https:` or any scheme
 * but `data:`), and the route's `allowedFileUrls` does not allow it. Nothing was written, no model was called.
 */
export class FileUrlNotAllowedError extends AgentHistoryError {
  /** Where the part is: `message.parts[2].url`. */
  readonly path: string;
  /** The refused URL. */
  readonly url: string;
  constructor({ path, url }: { path: string; url: string }) {
    super({
      code: 'file-url-not-allowed',
      message:
        `Invalid message ${path} ${describeValue(url)}: remote file URLs are not accepted ` +
        '(send the file as a data: URL or a provider file reference, or allow its origin with allowedFileUrls).',
    });
    this.path = path;
    this.url = url;
  }
}
