import { createIdGenerator, createUIMessageStreamResponse, type ToolSet, type UIMessage } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { StartRunOptions } from '../../store/runs.js';
import { registerActiveTurn } from './active-turns.js';
import { beginChatAnswer } from './begin-chat-answer.js';
import { continueChatAnswer, type ContinuedChatAnswer } from '../approvals/continue-chat-answer.js';
import { recordedApprovalTurn } from '../approvals/recorded-approval-turn.js';
import { abandonChatAnswer } from './abandon-chat-answer.js';
import type { ChatTurn } from './chat-turn.js';
import type { ChatContextManagerOption, ChatModelSource } from '../shared/chat-model-source.js';
import { openChatThread } from '../threads/open-chat-thread.js';
import type { ChatThreadSettings } from '../threads/chat-thread-settings.js';
import {
  persistUIMessageStream,
  type PersistedUIMessageStream,
  type PersistUIMessageStreamOptions,
} from '../answer/persist-ui-message-stream.js';
import { planChatTurn } from './plan-chat-turn.js';
import type { ChatTrigger } from '../shared/chat-trigger.js';
import { startChatModel } from './start-chat-model.js';
import type { ObservedModel } from '../answer/observed-model.js';
import type { IncomingMessagePolicy } from '../ui-messages/screen-incoming-message.js';
import type { ChatSchemas } from '../ui-messages/validate-chat-messages.js';

/** Settings shared by every turn of a chat route. */
export interface ChatTurnSettings<UI_MESSAGE extends UIMessage = UIMessage, TOOLS extends ToolSet = ToolSet>
  extends ChatSchemas<UI_MESSAGE>, IncomingMessagePolicy, ChatThreadSettings {
  /** The model: an agent, or a `streamText` call. */
  model: ChatModelSource<TOOLS>;
  /** The tools (for `streamText` sources, to type and map tool parts; an agent's own tools are used otherwise). */
  tools?: TOOLS & ChatSchemas<UI_MESSAGE>['tools'];
  /** The context engine (`createContextManager(...)`), or a function making one per turn. */
  contextManager?: ChatContextManagerOption<TOOLS>;
  /** Ids of new assistant messages (and of edited user messages). @default createIdGenerator({ prefix: 'msg', size: 16 }) */
  generateMessageId?: () => string;
  /** How many of the newest messages are read to validate the request and to build the context. @default 200 */
  historyLimit?: number;
  /**
   * How many bytes of stored messages (parts and metadata) are read at most for that, newest first, so that the
   * memory of a request stays bounded on a thread of large messages. @default 8_388_608 (8 MiB)
   */
  historyMaxBytes?: number;
  /** @default 'continue' */
  onDisconnect?: PersistUIMessageStreamOptions<UI_MESSAGE, TOOLS>['onDisconnect'];
  /** Metadata streamed with each answer (usage is added under `usage`). */
  messageMetadata?: PersistUIMessageStreamOptions<UI_MESSAGE, TOOLS>['messageMetadata'];
  /** @default 'usage' */
  usageMetadataKey?: string | false;
  /** @default true */
  sendReasoning?: boolean;
  /** @default false */
  sendSources?: boolean;
  /** The error text sent to the client when the model fails. */
  onError?: (error: unknown) => string;
  /** What is recorded on each run (provider, model, metadata). */
  run?: StartRunOptions;
  /** @default console.error */
  onPersistError?: (error: unknown) => void;
  /** Makes answers resumable (`useChat({ resume: true })`, see `resumeChatStream`). @default false */
  resumable?: PersistUIMessageStreamOptions<UI_MESSAGE, TOOLS>['resumable'];
}

/** Options of {@link streamChatTurn}: one turn's identity and trigger, and the settings shared by every turn. */
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
  /** Aborting it stops the answer like {@link stopChat} (the partial answer is kept as `cancelled`). */
  abortSignal?: AbortSignal;
}

const defaultMessageId = createIdGenerator({ prefix: 'msg', size: 16 });

/**
 * Answers one chat request and persists everything on the way: validates the incoming message with the stored
 * history (400, nothing written), stores it idempotently, refuses a double submit (`ChatConflictError`, 409),
 * starts a run, begins the assistant message, streams the model with the context manager's `prepareStep`,
 * checkpoints each step and finalizes the answer (completed, failed, or cancelled with its partial parts) with
 * the usage on the run and in the message metadata, also when the client disconnects.
 *
 * @example
 * const turn = await streamChatTurn({ history: store, threadId, message, model: { agent }, tools });
 * return turn.toResponse();
 */
export async function streamChatTurn<UI_MESSAGE extends UIMessage = UIMessage, TOOLS extends ToolSet = ToolSet>(
  options: StreamChatTurnOptions<UI_MESSAGE, TOOLS>,
): Promise<ChatTurn<UI_MESSAGE>> {
  const { history, model, generateMessageId = defaultMessageId, historyLimit = 200 } = options;
  const historyMaxBytes = options.historyMaxBytes ?? 8_388_608;
  const trigger = options.trigger ?? 'submit-message';
  const opened = await openChatThread({ ...options, trigger });
  const { threadId } = opened;
  // The turn's options as they are (message, ids, schemas, file and metadata policies), with the defaults applied.
  const plan = await planChatTurn<UI_MESSAGE>({
    ...options,
    threadId,
    trigger,
    historyLimit,
    historyMaxBytes,
    generateMessageId,
  });
  const { continuation } = plan;
  const answer = { history, threadId, trigger, userMessageId: plan.userMessage.id, run: options.run };
  const begun: ContinuedChatAnswer = continuation
    ? await continueChatAnswer({ ...answer, continuation })
    : await beginChatAnswer({ ...answer, answerKey: plan.answerKey, generateMessageId });
  if (begun.recorded) return recordedApprovalTurn(threadId, plan.userMessage.id, begun.recorded);
  const { runId, assistantMessageId } = begun;
  const abortController = followAbortSignal(options.abortSignal);
  const observedModel: ObservedModel = {};

  let persisted: PersistedUIMessageStream<UI_MESSAGE>;
  try {
    const { stream, tools } = await startChatModel({
      history,
      threadId,
      runId,
      model,
      contextManager: options.contextManager,
      contextMessages: plan.contextMessages,
      tools: options.tools,
      abortSignal: abortController.signal,
      observed: observedModel,
      beforeModel: begun.reopen,
    });
    persisted = persistUIMessageStream<UI_MESSAGE, TOOLS>({
      history,
      threadId,
      runId,
      messageId: assistantMessageId,
      stream,
      tools: options.tools ?? tools,
      originalMessages: [plan.userMessage, ...(continuation ? [continuation.message] : [])],
      abortController,
      onDisconnect: options.onDisconnect,
      messageMetadata: options.messageMetadata,
      usageMetadataKey: options.usageMetadataKey,
      sendReasoning: options.sendReasoning,
      sendSources: options.sendSources,
      onError: options.onError,
      onPersistError: options.onPersistError,
      observedModel,
      resumable: options.resumable,
    });
  } catch (error) {
    throw await abandonChatAnswer({ history, threadId, runId, assistantMessageId, continuation }, error);
  }

  registerActiveTurn(history.tenantId, threadId, {
    runId,
    assistantMessageId,
    abort: () => abortController.abort(),
    done: persisted.done,
  });
  return toChatTurn(
    { threadId, runId, userMessageId: plan.userMessage.id, assistantMessageId },
    plan.excludedMessageIds,
    persisted,
    opened.titleAfter(plan.userMessage, plan.contextMessages.length, persisted.done),
  );
}

// The response headers carry the ids so that a client can stop or reload the turn before the stream ends.
function toChatTurn<UI_MESSAGE extends UIMessage>(
  ids: Pick<ChatTurn<UI_MESSAGE>, 'threadId' | 'runId' | 'userMessageId' | 'assistantMessageId'>,
  excludedMessageIds: string[],
  persisted: PersistedUIMessageStream<UI_MESSAGE>,
  title: Promise<string | null>,
): ChatTurn<UI_MESSAGE> {
  return {
    ...ids,
    excludedMessageIds,
    title,
    stream: persisted.stream,
    done: persisted.done,
    toResponse: (init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('x-agent-history-thread-id', ids.threadId);
      headers.set('x-agent-history-run-id', ids.runId);
      headers.set('x-agent-history-user-message-id', ids.userMessageId);
      headers.set('x-agent-history-message-id', ids.assistantMessageId);
      return createUIMessageStreamResponse({ ...init, headers, stream: persisted.stream });
    },
  };
}

// The model call must stop when the caller's signal aborts (like a stop), also if it aborted already; the turn
// owns its own controller because a stop or a disconnect aborts it too.
function followAbortSignal(abortSignal: AbortSignal | undefined): AbortController {
  const abortController = new AbortController();
  if (abortSignal) {
    if (abortSignal.aborted) abortController.abort(abortSignal.reason);
    else abortSignal.addEventListener('abort', () => abortController.abort(abortSignal.reason), { once: true });
  }
  return abortController;
}
