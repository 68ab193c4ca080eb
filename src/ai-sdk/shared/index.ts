/** The contracts several features share: what starts a turn, its conflicts, its model and resumable answers. */
export type { ChatTrigger } from './chat-trigger.js';
export { ChatConflictError, type ChatConflictReason } from './chat-conflict-error.js';
export type {
  ChatAgent,
  ChatContextManager,
  ChatContextManagerOption,
  ChatModelSource,
  ChatStreamResult,
  ChatTurnIdentity,
  TurnPrepareStep,
} from './chat-model-source.js';
export type { ResumableStreamOptions } from './resumable-stream-options.js';
