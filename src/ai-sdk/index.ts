/**
 * `agent-history/ai-sdk`: persistence for AI SDK v7 chats (the only part of the package that imports `ai`). Each
 * feature's folder lists its public names in its own `index.ts`; this entry is their union.
 */
export * from './chat-route/index.js';
export * from './chat-turn/index.js';
export * from './answer/index.js';
export * from './resume/index.js';
export * from './threads/index.js';
export * from './titles/index.js';
export * from './ui-messages/index.js';
export * from './context-manager/index.js';
export * from './summarizers/index.js';
export * from './shared/index.js';
export * from './working-memory/index.js';
export * from './memory/index.js';
