/** `agent-history/ai-sdk`: persistence for AI SDK v7 chats (the only part of the package that imports `ai`). */
export { fromUIMessage, toUIMessage, toUIMessages } from './ui-messages/ui-message-mapping.js';
export { validateChatMessages, type ChatSchemas } from './ui-messages/validate-chat-messages.js';
export { chatMessageCheck } from './ui-messages/chat-message-check.js';
export {
  screenIncomingMessage,
  type FileUrlAllowlist,
  type IncomingMessagePolicy,
} from './ui-messages/screen-incoming-message.js';
export {
  loadThreadPage,
  type LoadThreadPageOptions,
  type UIMessagePage,
  type UIMessagePageEntry,
} from './ui-messages/load-thread-page.js';
export {
  persistUIMessageStream,
  type PersistedUIMessageStream,
  type PersistUIMessageStreamOptions,
} from './answer/persist-ui-message-stream.js';
export type { DisconnectBehavior } from './answer/disconnect-behavior.js';
export { streamChatTurn } from './chat-turn/stream-chat-turn.js';
export type { ChatTurnSettings, StreamChatTurnOptions } from './chat-turn/chat-turn-options.js';
export type { ChatTurn } from './chat-turn/chat-turn.js';
export { SUPERSEDED_BY_EDIT, SUPERSEDED_BY_REGENERATE } from './chat-turn/exclusion-reasons.js';
export type { ChatTrigger } from './shared/chat-trigger.js';
export { stopChat, type StopChatOptions } from './chat-turn/stop-chat.js';
export type { ResumableStreamOptions } from './shared/resumable-stream-options.js';
export {
  resumeChatStream,
  RESUME_GAP_ERROR,
  type ResumeChatStreamOptions,
  type ResumedChatStream,
} from './resume/resume-chat-stream.js';
export {
  resumeChatRequest,
  type ResumeChatRequestOptions,
  type ResumeRouteContext,
} from './chat-route/resume-chat-request.js';
export { chatThreadId } from './threads/chat-thread-id.js';
export type { ChatThreadSettings, CreateChatThreads } from './threads/chat-thread-settings.js';
export { generateThreadTitle, type ChatTitleGenerator, type ThreadTitleInput } from './titles/generate-thread-title.js';
export { offlineThreadTitle } from './titles/offline-thread-title.js';
export { createChatHandler } from './chat-route/create-chat-handler.js';
export type { CreateChatHandlerOptions } from './chat-route/create-chat-handler-options.js';
export { parseChatRequest } from './chat-route/parse-chat-request.js';
export type { ChatRequestBody, ChatRequestContext } from './chat-route/chat-request.js';
export { chatErrorResponse, chatErrorStatus, type ChatErrorBody } from './chat-route/chat-error-response.js';
export { ChatConflictError, type ChatConflictReason } from './shared/chat-conflict-error.js';
export { ChatBodyTooLargeError } from './chat-route/chat-body-too-large-error.js';
export { INTERRUPTED_TOOL_ERROR, settleInterruptedParts } from './answer/settle-interrupted-parts.js';
export { addUsage, toMessageUsage, toRunUsage, type MessageUsage } from './answer/message-usage.js';
export type {
  ChatAgent,
  ChatStreamResult,
  ChatContextManager,
  ChatContextManagerOption,
  ChatModelSource,
  ChatTurnIdentity,
  TurnPrepareStep,
} from './shared/chat-model-source.js';
export { toolDefinitionsOf } from './context-manager/tool-definitions-of.js';
export {
  createContextManager,
  type ContextManager,
  type ContextManagerModel,
  type CreateContextManagerOptions,
} from './context-manager/create-context-manager.js';

// The context engine, which `createContextManager` runs. It does not need `ai` at run time (it only uses its
// message types), but it works on AI SDK model messages, so it is documented and exported here, once.
export {
  createContextEngine,
  type ContextEngine,
  type ContextInstructions,
  type CreateContextEngineOptions,
  ContextEmptyError,
  ContextBudgetExceededError,
  computeContextBudget,
  type ComputeContextBudgetOptions,
  type ContextBudget,
  defaultContextPolicy,
  resolveContextPolicy,
  type ContextMemoryPolicy,
  type ContextPolicy,
  type ContextPolicyInput,
  type ContextPrunePolicy,
  type ContextSummaryPolicy,
  type ContextToolOutputPreviewPolicy,
  type ContextReport,
  type ContextSnapshotReport,
  type ContextStageReport,
  type ConvertStageReport,
  type FilterStageReport,
  type MemoryStageReport,
  type PruneStageReport,
  type SelectStageReport,
  type SummarizeStageReport,
  type TrimStageReport,
  type ValidateStageReport,
  type ContextRemoval,
  type ContextRemovalReason,
  type ContextSnapshotPruning,
  type ContextSummarizer,
  type ContextSummarizerInput,
  rebuildContextFromSnapshot,
  type RebuildContextFromSnapshotOptions,
  hashContextMessages,
  formatContextReport,
  formatContextBudgetBar,
  type FormatContextBudgetBarOptions,
  buildSummaryPrompt,
  renderSummaryTranscript,
  summarySections,
  toolOutputText,
  toolOutputPreviewMarker,
  type PartMigration,
} from '../context/index.js';
// Token counting and model profiles: what the budget is made of.
export {
  resolveModelProfile,
  modelFamilyDefaults,
  modelProfileTable,
  ModelProfileNotFoundError,
  type ModelFamily,
  type ModelProfile,
  type ModelProfileEntry,
  type ResolveModelProfileOptions,
  createContextCalibrator,
  type ContextCalibrator,
  type CreateContextCalibratorOptions,
  createContextMeasure,
  estimateTokens,
  exactTokens,
  type ContextMeasure,
  type CreateContextMeasureOptions,
  convertUIMessageToModelMessages,
  type ConvertUIMessageOptions,
  type ToolOutputConversionInput,
  type ToolResultOutput,
  countModelMessageTokens,
  countModelMessagesTokens,
  countStoredMessageTokens,
  countStoredPartTokens,
  storedTokenCountId,
  type TokenTally,
  countToolDefinitionTokens,
  estimateToolDefinitionTokens,
  type ToolDefinition,
} from '../context/index.js';
export {
  createGenerateTextSummarizer,
  type CreateGenerateTextSummarizerOptions,
} from './summarizers/generate-text-summarizer.js';
export { createOfflineSummarizer, type CreateOfflineSummarizerOptions } from './summarizers/offline-summarizer.js';
