import type { UIMessageChunk } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import { resolveResumableStreamOptions, type ResumableStreamOptions } from '../shared/resumable-stream-options.js';
import { instruments } from '../../telemetry/meter.js';

/** Options of {@link resumeChatStream}. */
export interface ResumeChatStreamOptions extends ResumableStreamOptions {
  /** The tenant's store. */
  history: TenantHistory;
  /** The thread whose answer in progress is replayed. */
  threadId: string;
  /**
   * The answer to replay, also after it ended while its log is kept (`retainMs`); without a log, the stream ends
   * empty after `settleMs`. @default the thread's answer in progress
   */
  messageId?: string;
  /** How many of the answer's chunks the client has already: the replay starts after them. @default 0 (all) */
  fromChunk?: number;
  /** Stops the replay (the client went away). */
  abortSignal?: AbortSignal;
}

/** An answer in progress, replayed from its start. */
export interface ResumedChatStream {
  /** The id of the assistant message being streamed. */
  messageId: string;
  /** Its UI message chunks from the first, each once and in order, until its last (or until it ended elsewhere). */
  stream: ReadableStream<UIMessageChunk>;
}

/** The error chunk sent when the log lost batches under a reader (deleted meanwhile): never a silent gap. */
export const RESUME_GAP_ERROR = 'The answer can no longer be replayed: reload the chat.';

/**
 * Replays the thread's answer in progress from its chunk log (written by a turn with `resumable`), in this process or
 * any other: every chunk from the first, exactly once and in order, then the chunks still to come as they are
 * committed (woken by LISTEN/NOTIFY, or by polling), until the answer's last chunk. Resolves to null when no answer
 * is pending or streaming in the thread (a GET route answers 204 then).
 *
 * @throws {NotFoundError} The thread is missing or another tenant's.
 * @example
 * const resumed = await resumeChatStream({ history: store, threadId });
 * return resumed ? createUIMessageStreamResponse({ stream: resumed.stream }) : new Response(null, { status: 204 });
 */
export async function resumeChatStream({
  history,
  threadId,
  abortSignal,
  messageId: wanted,
  fromChunk = 0,
  ...options
}: ResumeChatStreamOptions): Promise<ResumedChatStream | null> {
  const { notifications, pollMs, settleMs } = resolveResumableStreamOptions(options)!;
  if (!Number.isSafeInteger(fromChunk) || fromChunk < 0)
    throw new InvalidArgumentError({ argument: 'fromChunk', value: fromChunk, message: 'expected an integer ≥ 0.' });
  const messageId = wanted ?? (await activeAnswerOf(history, threadId));
  if (messageId === undefined) return null;
  if (wanted !== undefined) await history.readStreamChunks(threadId, wanted, { limit: 1 }); // NotFoundError
  let skip = fromChunk;

  const waiter = await createLogWaiter(history, threadId, messageId, { notifications, pollMs, abortSignal });

  let next = 0;
  let endedAt: number | undefined;
  let cancelled = false;
  const stream = new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      for (;;) {
        if (cancelled) return;
        if (abortSignal?.aborted) return finish(controller);
        waiter.arm();
        const { batches, status } = await history.readStreamChunks(threadId, messageId, { fromBatch: next });
        if (cancelled) return;
        for (const batch of batches) {
          if (batch.batch !== next) {
            controller.enqueue({ type: 'error', errorText: RESUME_GAP_ERROR });
            return finish(controller);
          }
          for (const chunk of batch.chunks) {
            if (skip > 0) skip--;
            else controller.enqueue(chunk as UIMessageChunk);
          }
          next++;
          if (batch.final) return finish(controller);
        }
        if (batches.length > 0) {
          if ((controller.desiredSize ?? 0) <= 0) return;
          continue;
        }
        if (status !== 'pending' && status !== 'streaming') {
          // Ended elsewhere (a stop, a recovery) or its last write failed: wait a little for the final batch.
          endedAt ??= Date.now();
          if (Date.now() - endedAt >= settleMs) return finish(controller);
        }
        await waiter.wait();
      }
    },
    cancel: () => {
      // The client went away: no more reads, and the wait in progress ends now.
      cancelled = true;
      waiter.stop();
    },
  });
  function finish(controller: ReadableStreamDefaultController<UIMessageChunk>) {
    waiter.stop();
    controller.close();
  }
  instruments().streamsResumed.add(1);
  return { messageId, stream };
}

// The newest answer of the thread that is pending or streaming: a turn refuses to start while one is.
async function activeAnswerOf(history: TenantHistory, threadId: string): Promise<string | undefined> {
  const page = await history.listMessages(threadId, { limit: 20, roles: ['assistant'] });
  return page.messages.find((row) => row.status === 'pending' || row.status === 'streaming')?.message.id;
}

// Waits for the log to grow: a notification (LISTEN), the poll interval, an abort or a stop, whichever comes first.
// `arm()` before each read: a notification that arrives during the read makes the next wait return at once.
async function createLogWaiter(
  history: TenantHistory,
  threadId: string,
  messageId: string,
  {
    notifications,
    pollMs,
    abortSignal,
  }: { notifications: 'listen' | 'poll'; pollMs: number; abortSignal?: AbortSignal },
) {
  let wake: (() => void) | undefined;
  let notified = false;
  let stopped = false;
  const onNotify = () => {
    notified = true;
    wake?.();
  };
  const unsubscribe =
    notifications === 'listen' ? await history.subscribeStreamChunks(threadId, messageId, onNotify) : null;
  // Without LISTEN (the driver cannot), poll often whatever pollMs says for LISTEN's safety net.
  const interval = unsubscribe || notifications === 'poll' ? pollMs : Math.min(pollMs, 100);
  return {
    arm: () => void (notified = false),
    wait: () =>
      new Promise<void>((resolve) => {
        if (notified || stopped || abortSignal?.aborted) return resolve();
        const timer = setTimeout(done, interval);
        function done() {
          clearTimeout(timer);
          abortSignal?.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        }
        wake = done;
        abortSignal?.addEventListener('abort', done, { once: true });
      }),
    stop: () => {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      wake?.();
    },
  };
}
