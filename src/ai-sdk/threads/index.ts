/** A chat's thread: the client's chat id mapped to it, created on the first message, owned by its user. */
export { chatThreadId } from './chat-thread-id.js';
export type { ChatThreadSettings, CreateChatThreads } from './chat-thread-settings.js';
