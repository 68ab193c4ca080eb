/** `agent-history/ai-sdk`: persistence for AI SDK v7 chats (the only part of the package that imports `ai`). */
export { fromUIMessage, toUIMessage, toUIMessages } from './ui-message-mapping.js';
export { validateChatMessages, type ChatSchemas } from './validate-chat-messages.js';
export {
  loadThreadPage,
  type LoadThreadPageOptions,
  type ThreadPage,
  type ThreadPageEntry,
} from './load-thread-page.js';
export {
  persistUIMessageStream,
  type DisconnectBehavior,
  type PersistedUIMessageStream,
  type PersistUIMessageStreamOptions,
} from './persist-ui-message-stream.js';
export {
  streamChatTurn,
  type ChatTurn,
  type ChatTurnSettings,
  type StreamChatTurnOptions,
} from './stream-chat-turn.js';
export { SUPERSEDED_BY_EDIT, SUPERSEDED_BY_REGENERATE, type ChatTrigger } from './plan-chat-turn.js';
export { stopChat, type StopChatOptions } from './stop-chat.js';
export {
  createChatHandler,
  parseChatRequest,
  type ChatRequestBody,
  type CreateChatHandlerOptions,
} from './create-chat-handler.js';
export { chatErrorResponse, chatErrorStatus, type ChatErrorBody } from './chat-error-response.js';
export { ChatConflictError, type ChatConflictReason } from './chat-conflict-error.js';
export { INTERRUPTED_TOOL_ERROR, settleInterruptedParts } from './settle-interrupted-parts.js';
export { addUsage, toMessageUsage, toRunUsage, type MessageUsage } from './usage.js';
export type {
  ChatAgent,
  ChatStreamResult,
  ChatContextManager,
  ChatContextManagerOption,
  ChatModelSource,
  ChatTurnIdentity,
  TurnPrepareStep,
} from './chat-model-source.js';
export {
  createContextManager,
  toolDefinitionsOf,
  type ContextManager,
  type ContextManagerModel,
  type CreateContextManagerOptions,
} from './context-manager.js';
export type { ContextBudget, ContextReport, ContextStageReport } from '../context/index.js';
export {
  createGenerateTextSummarizer,
  createOfflineSummarizer,
  type CreateGenerateTextSummarizerOptions,
  type CreateOfflineSummarizerOptions,
} from './summarizer.js';
