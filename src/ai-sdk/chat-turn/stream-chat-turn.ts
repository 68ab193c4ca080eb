import { createIdGenerator, createUIMessageStreamResponse, type ToolSet, type UIMessage } from 'ai';
import { registerActiveTurn } from './active-turns.js';
import { beginChatAnswer } from './begin-chat-answer.js';
import { continueChatAnswer, type ContinuedChatAnswer } from '../approvals/continue-chat-answer.js';
import { recordedApprovalTurn } from '../approvals/recorded-approval-turn.js';
import { abandonChatAnswer } from './abandon-chat-answer.js';
import type { ChatTurn } from './chat-turn.js';
import { openChatThread } from '../threads/open-chat-thread.js';
import { persistUIMessageStream, type PersistedUIMessageStream } from '../answer/persist-ui-message-stream.js';
import { planChatTurn } from './plan-chat-turn.js';
import { startChatModel } from './start-chat-model.js';
import type { ObservedModel } from '../answer/observed-model.js';
import { ANSWER_STREAM_SETTINGS, type StreamChatTurnOptions } from './chat-turn-options.js';
import { pickOptions } from './pick-options.js';
import { inSpan } from '../../telemetry/in-span.js';
import { CHAT_SPANS, UNTIL_ANSWER_STORED } from './chat-spans.js';

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
  const { opened, plan } = await inSpan(CHAT_SPANS.plan, async () => {
    const opened = await openChatThread({ ...options, trigger });
    // The turn's options as they are (message, ids, schemas, file and metadata policies), with the defaults applied.
    const plan = await planChatTurn<UI_MESSAGE>({
      ...options,
      threadId: opened.threadId,
      trigger,
      historyLimit,
      historyMaxBytes,
      generateMessageId,
    });
    return { opened, plan };
  });
  const { threadId } = opened;
  const { continuation } = plan;
  const answer = { history, threadId, trigger, userMessageId: plan.userMessage.id, run: options.run };
  const begun: ContinuedChatAnswer = await inSpan(CHAT_SPANS.persist, () =>
    continuation
      ? continueChatAnswer({ ...answer, continuation })
      : beginChatAnswer({ ...answer, answerKey: plan.answerKey, generateMessageId }),
  );
  if (begun.recorded) return recordedApprovalTurn(threadId, plan.userMessage.id, begun.recorded);
  const { runId, assistantMessageId } = begun;
  const abortController = followAbortSignal(options.abortSignal);
  const observedModel: ObservedModel = {};

  let persisted: PersistedUIMessageStream<UI_MESSAGE>;
  try {
    // The stream phase lasts until the answer is stored: the model's steps, their checkpoints and the finalize.
    persisted = await inSpan(CHAT_SPANS.stream, streamPhase, UNTIL_ANSWER_STORED);
  } catch (error) {
    throw await abandonChatAnswer({ history, threadId, runId, assistantMessageId, continuation }, error);
  }
  async function streamPhase(): Promise<PersistedUIMessageStream<UI_MESSAGE>> {
    const { stream, tools } = await startChatModel({
      history,
      threadId,
      runId,
      model,
      contextManager: options.contextManager,
      workingMemory: options.workingMemory,
      contextMessages: plan.contextMessages,
      tools: options.tools,
      abortSignal: abortController.signal,
      observed: observedModel,
      beforeModel: begun.reopen,
    });
    return persistUIMessageStream<UI_MESSAGE, TOOLS>({
      ...pickOptions(options, ANSWER_STREAM_SETTINGS),
      history,
      threadId,
      runId,
      messageId: assistantMessageId,
      stream,
      tools: options.tools ?? tools,
      originalMessages: [plan.userMessage, ...(continuation ? [continuation.message] : [])],
      abortController,
      observedModel,
    });
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
