import type { ChatTitleGenerator } from '../titles/generate-thread-title.js';

/**
 * Whether a chat turn may create its thread: `'on-first-message'` creates a missing thread when a new user message
 * is submitted to it (useChat's or the client's own id, see `chatThreadId`); `'never'` answers 404 instead.
 */
export type CreateChatThreads = 'on-first-message' | 'never';

/** Settings of a chat route about its threads: created on the first message, and titled after it. */
export interface ChatThreadSettings {
  /**
   * `'on-first-message'`: a chat id the store does not know yet (a uuid made by the client, or useChat's own id,
   * mapped by `chatThreadId`) creates its thread on the first submitted message, owned by the turn's `userId`.
   * @default 'never' (a missing thread is 404 `thread-not-found`)
   */
  createThreads?: CreateChatThreads;
  /**
   * Writes the title of an untitled thread after its first exchange (once the answer is completed): a model, or a
   * function such as `offlineThreadTitle`. The turn's `title` promise settles with it.
   * @default no titles
   */
  generateTitle?: ChatTitleGenerator;
}
