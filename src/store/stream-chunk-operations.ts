import type {
  AppendStreamChunksOptions,
  DeleteStreamChunksOptions,
  ReadStreamChunksOptions,
  StreamChunkPage,
} from './stream-chunks.js';

/**
 * The chunk log of answers being streamed: the part of `TenantHistory` that lets another request, in this process or
 * another one, replay an answer in progress (`resumeChatStream` in `agent-history/ai-sdk` uses it). A log belongs to
 * an assistant message (by its client id), is written in batches while it streams, and is deleted after it ends.
 */
export interface StreamChunkOperations {
  /**
   * Appends one batch to an assistant message's chunk log and notifies its readers (`pg_notify` on
   * `agent_history_stream`, at commit; the payload is a hash, naming no tenant). Idempotent by batch number. A batch
   * of a redacted message is dropped (its log stays empty).
   *
   * @throws {NotFoundError} The thread or the assistant message is missing or another tenant's.
   * @throws {InvalidArgumentError} `batch` is not an integer ≥ 0, `chunks` not an array or `final` not a boolean.
   * @example
   * await store.appendStreamChunks(thread.id, messageId, { batch: 0, chunks: [{ type: 'start', messageId }] });
   */
  appendStreamChunks(threadId: string, messageId: string, options: AppendStreamChunksOptions): Promise<void>;

  /**
   * Reads an assistant message's chunk log from `fromBatch` on, in order, with the message's status read in the same
   * transaction.
   *
   * @throws {NotFoundError} The thread or the assistant message is missing or another tenant's.
   * @throws {InvalidArgumentError} `fromBatch` is not an integer ≥ 0 or `limit` not one from 1 to 1000.
   */
  readStreamChunks(threadId: string, messageId: string, options?: ReadStreamChunksOptions): Promise<StreamChunkPage>;

  /**
   * Deletes one message's chunk log, or every log of the thread whose message has ended (optionally only the
   * batches written before `before`). Returns how many batches were deleted.
   *
   * @throws {NotFoundError} The thread id is not a uuid.
   * @throws {InvalidArgumentError} `before` is not a valid Date.
   */
  deleteStreamChunks(threadId: string, options?: DeleteStreamChunksOptions): Promise<number>;

  /**
   * Calls `onNotify` whenever a batch is appended to the message's log, from any process (LISTEN, one connection per
   * database client). Resolves to the function that stops it once listening, or to null when the driver cannot LISTEN
   * (node-postgres, PgBouncer in transaction mode): poll `readStreamChunks` then.
   */
  subscribeStreamChunks(threadId: string, messageId: string, onNotify: () => void): Promise<(() => void) | null>;
}
