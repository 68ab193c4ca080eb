import type { TenantHistory } from '../../store/tenant-history.js';
import type { ResumableStreamOptions } from '../shared/resumable-stream-options.js';

/** Options of {@link createStreamChunkLog}. */
export interface CreateStreamChunkLogOptions {
  /** The tenant's store. */
  history: TenantHistory;
  /** The answer's thread. */
  threadId: string;
  /** The assistant message being streamed (begun, so the log has a row to belong to). */
  messageId: string;
  /** Batching and retention. */
  options: Required<Pick<ResumableStreamOptions, 'flushMs' | 'retainMs'>>;
  /** Called when a batch or the clean-up cannot be written; the log stops (readers then end with the answer). */
  onPersistError: (error: unknown) => void;
}

/** The writing end of an answer's chunk log. */
export interface StreamChunkLog {
  /** Adds a chunk; it is written with the next batch. */
  push(chunk: unknown): void;
  /** Writes what is left as the final batch, then schedules the log's deletion after `retainMs`. */
  close(): Promise<void>;
}

/**
 * Writes an answer's UI message chunks to the store's chunk log in batches numbered 0, 1, 2… in order: the first
 * chunk at once, then at most one write every `flushMs`, never two at a time (a batch waits for the previous one to
 * commit, so a slow database gets fewer, larger batches instead of a queue).
 */
export function createStreamChunkLog({
  history,
  threadId,
  messageId,
  options: { flushMs, retainMs },
  onPersistError,
}: CreateStreamChunkLogOptions): StreamChunkLog {
  let pending: unknown[] = [];
  let batch = 0;
  let failed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: Promise<void> | undefined;

  const write = (final: boolean): Promise<void> => {
    const chunks = pending;
    pending = [];
    const number = batch++;
    const written = history.appendStreamChunks(threadId, messageId, { batch: number, chunks, final });
    // Then the logs of earlier answers of the thread that ended over `retainMs` ago (a crashed writer never deletes
    // its own); this answer is pending, so it is not one of them.
    if (number === 0)
      void written
        .then(() => history.deleteStreamChunks(threadId, { before: new Date(Date.now() - retainMs) }))
        .catch(() => {});
    return written.catch((error) => {
      failed = true;
      onPersistError(error);
    });
  };
  const flush = () => {
    timer = undefined;
    if (inFlight || failed || pending.length === 0) return;
    inFlight = write(false).finally(() => {
      inFlight = undefined;
      if (pending.length > 0 && !timer && !closed) timer = setTimeout(flush, flushMs);
    });
  };
  let closed = false;

  return {
    push(chunk) {
      if (failed || closed) return;
      pending.push(chunk);
      if (!timer && !inFlight) timer = setTimeout(flush, batch === 0 ? 0 : flushMs);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      await inFlight;
      if (failed) return;
      await write(true);
      const cleanUp = setTimeout(() => {
        void history.deleteStreamChunks(threadId, { messageId }).catch(onPersistError);
      }, retainMs);
      cleanUp.unref?.();
    },
  };
}
