import type { ChatTrigger } from '../shared/chat-trigger.js';

/** The body a chat route accepts. useChat's default body (`{ id, messages, trigger, messageId }`) works too. */
export interface ChatRequestBody {
  /** The thread (useChat's `id`). */
  threadId: string;
  /** The new user message; only this one is needed, the history is in the store. */
  message?: unknown;
  /** @default 'submit-message' */
  trigger?: ChatTrigger;
  /** The edited user message, or the assistant message to regenerate. */
  messageId?: string;
  /** An idempotency key for the request. */
  requestId?: string;
}

/**
 * What `getHistory` is told about a request: read, size-checked and parsed, but nothing read from or written to the
 * store yet, so the app can authorize the request for this thread (throw a `Response`: 403, 404, …).
 */
export interface ChatRequestContext {
  /** `'chat'` for `POST` (a turn), `'stop'` for `stop`, `'resume'` for `GET` (useChat's resume). */
  route: 'chat' | 'stop' | 'resume';
  /** The thread the request acts on: the client's chat id mapped by `chatThreadId` (a uuid stays itself). */
  threadId: string;
  /** The chat id as the client sent it (useChat's `id`). */
  chatId: string;
  /** The parsed body (`stop`: only `threadId`). */
  body: ChatRequestBody;
}
