import type { DisconnectBehavior } from './disconnect-behavior.js';

/**
 * The client's copy of a persisted UI message stream: `branch`'s chunks, forwarded as they are read. When the
 * client goes away, `onDisconnect: 'cancel'` aborts the model call; the server's copy is read to its end either
 * way, so the answer is still finalized.
 */
export function createClientStream<CHUNK>(
  branch: ReadableStream<CHUNK>,
  onDisconnect: DisconnectBehavior,
  abortController: AbortController,
): ReadableStream<CHUNK> {
  const reader = branch.getReader();
  return new ReadableStream<CHUNK>({
    async pull(controller) {
      const { done: finished, value } = await reader.read();
      if (finished) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      if (onDisconnect === 'cancel') abortController.abort(reason);
      // Not awaited: a tee branch's cancel settles only when the other branch (the server's) ends too.
      void reader.cancel(reason).catch(() => {});
    },
  });
}
