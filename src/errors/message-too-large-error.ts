import { AgentHistoryError } from './agent-history-error.js';

/** A message is larger than the store's `maxMessageBytes`. Nothing was written. */
export class MessageTooLargeError extends AgentHistoryError {
  /** The message's `UIMessage.id`. */
  readonly messageId: string;
  /** Its size: parts and metadata serialized as JSON, in bytes. */
  readonly byteSize: number;
  /** The store's `maxMessageBytes`. */
  readonly limit: number;
  constructor({ messageId, byteSize, limit }: { messageId: string; byteSize: number; limit: number }) {
    super({
      code: 'message-too-large',
      message: `The message ${JSON.stringify(messageId.slice(0, 100))} is ${byteSize} bytes, over the limit of ${limit} bytes.`,
    });
    this.messageId = messageId;
    this.byteSize = byteSize;
    this.limit = limit;
  }
}
