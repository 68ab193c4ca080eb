import type { ToolSet, UIMessage } from 'ai';
import type { StartRunOptions } from '../../store/runs.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { PersistUIMessageStreamOptions } from '../answer/persist-ui-message-stream.js';
import type { ChatContextManagerOption, ChatModelSource } from '../shared/chat-model-source.js';
import type { ChatTrigger } from '../shared/chat-trigger.js';
import type { ChatThreadSettings } from '../threads/chat-thread-settings.js';
import type { IncomingMessagePolicy } from '../ui-messages/screen-incoming-message.js';
import type { ChatSchemas } from '../ui-messages/validate-chat-messages.js';
import type { ChatWorkingMemorySettings } from '../working-memory/chat-working-memory.js';

/**
 * The options of the answer's UI message stream that a chat route sets once for every turn: declared and documented
 * on {@link PersistUIMessageStreamOptions}, and handed to it as they are.
 */
export const ANSWER_STREAM_SETTINGS = [
  'onDisconnect',
  'messageMetadata',
  'usageMetadataKey',
  'sendReasoning',
  'sendSources',
  'onError',
  'onPersistError',
  'resumable',
] as const;

/** Settings shared by every turn of a chat route. */
export interface ChatTurnSettings<UI_MESSAGE extends UIMessage = UIMessage, TOOLS extends ToolSet = ToolSet>
  extends
    ChatSchemas<UI_MESSAGE>,
    IncomingMessagePolicy,
    ChatThreadSettings,
    Pick<PersistUIMessageStreamOptions<UI_MESSAGE, TOOLS>, (typeof ANSWER_STREAM_SETTINGS)[number]> {
  /** The model: an agent, or a `streamText` call. */
  model: ChatModelSource<TOOLS>;
  /** The tools (for `streamText` sources, to type and map tool parts; an agent's own tools are used otherwise). */
  tools?: TOOLS & ChatSchemas<UI_MESSAGE>['tools'];
  /** The context engine (`createContextManager(...)`), or a function making one per turn. */
  contextManager?: ChatContextManagerOption<TOOLS>;
  /**
   * Memory across threads: the working memory of the turn's user. The route then builds the `updateWorkingMemory`
   * tool on it each turn and hands it to the model source as `memoryTools` (offer it with the agent's or the
   * `streamText` call's tools); the context manager (`policy.memory`) shows the document to the model. @default none
   */
  workingMemory?: ChatWorkingMemorySettings;
  /** Ids of new assistant messages (and of edited user messages). @default createIdGenerator({ prefix: 'msg', size: 16 }) */
  generateMessageId?: () => string;
  /** How many of the newest messages are read to validate the request and to build the context. @default 200 */
  historyLimit?: number;
  /**
   * How many bytes of stored messages (parts and metadata) are read at most for that, newest first, so that the
   * memory of a request stays bounded on a thread of large messages. @default 8_388_608 (8 MiB)
   */
  historyMaxBytes?: number;
  /** What is recorded on each run (provider, model, metadata). */
  run?: StartRunOptions;
}

/** Options of `streamChatTurn`: one turn's identity and trigger, and the settings shared by every turn. */
export interface StreamChatTurnOptions<
  UI_MESSAGE extends UIMessage = UIMessage,
  TOOLS extends ToolSet = ToolSet,
> extends ChatTurnSettings<UI_MESSAGE, TOOLS> {
  /** The tenant's store (`createAgentHistory({ db }).forTenant(tenantId)`). */
  history: TenantHistory;
  /**
   * The thread, or the client's chat id (mapped by `chatThreadId`): another tenant's, another `userId`'s or a
   * missing one is `NotFoundError`, unless `createThreads` creates it.
   */
  threadId: string;
  /** The user: recorded as the owner of a thread created here; a thread of another user is not found. */
  userId?: string;
  /** @default 'submit-message' */
  trigger?: ChatTrigger;
  /** The new user message (for `submit-message`). Only this message is sent; the history is read from the store. */
  message?: unknown;
  /**
   * For `submit-message`: the id of the user message being edited (useChat's `sendMessage({ messageId })`).
   * For `regenerate-message`: the assistant message to regenerate (default: the last answer).
   */
  messageId?: string;
  /** An idempotency key of the request, stored as the user message's `clientRequestId` (as `request:<requestId>`). */
  requestId?: string;
  /** Aborting it stops the answer like `stopChat` (the partial answer is kept as `cancelled`). */
  abortSignal?: AbortSignal;
}
