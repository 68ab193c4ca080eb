/** One chat turn: planned, answered by the model, persisted, and stopped on demand. */
export { streamChatTurn } from './stream-chat-turn.js';
export type { ChatTurnSettings, StreamChatTurnOptions } from './chat-turn-options.js';
export type { ChatTurn } from './chat-turn.js';
export { stopChat, type StopChatOptions } from './stop-chat.js';
