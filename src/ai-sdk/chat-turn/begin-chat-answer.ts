import type { TenantHistory } from '../../store/tenant-history.js';
import type { StartRunOptions } from '../../store/runs.js';
import { ChatConflictError } from '../shared/chat-conflict-error.js';
import type { ChatTrigger } from '../shared/chat-trigger.js';

/** Options of {@link beginChatAnswer}. */
export interface BeginChatAnswerOptions {
  /** The tenant's store. */
  history: TenantHistory;
  /** The turn's thread. */
  threadId: string;
  /** What triggered the turn, recorded in the run's metadata. */
  trigger: ChatTrigger;
  /** The stored user message the answer follows, recorded in the run's metadata. */
  userMessageId: string;
  /** The answer's idempotency key (the planned turn's `answerKey`), stored as its `clientRequestId`. */
  answerKey: string;
  /** What is recorded on the run (provider, model, metadata). */
  run: StartRunOptions | undefined;
  /** The id of the new assistant message. */
  generateMessageId: () => string;
}

/** The run and the assistant message begun for a turn. */
export interface BegunChatAnswer {
  /** The run started for the turn. */
  runId: string;
  /** The id of the assistant message begun (pending) for the answer. */
  assistantMessageId: string;
}

/**
 * Starts the turn's run and begins its assistant message under the answer's idempotency key. When a racing
 * duplicate request began that answer first, the run is finished `cancelled` and a {@link ChatConflictError}
 * says whether that answer is still in progress or already exists.
 */
export async function beginChatAnswer({
  history,
  threadId,
  trigger,
  userMessageId,
  answerKey,
  run: runOptions,
  generateMessageId,
}: BeginChatAnswerOptions): Promise<BegunChatAnswer> {
  const run = await history.startRun(threadId, {
    ...runOptions,
    metadata: { ...runOptions?.metadata, trigger, userMessageId },
  });
  const begun = await history.beginAssistantMessage(threadId, {
    messageId: generateMessageId(),
    runId: run.id,
    clientRequestId: answerKey,
  });
  if (!begun.created) {
    // A racing duplicate got there first: this request writes nothing more.
    await history.finishRun(run.id, { status: 'cancelled', error: { message: 'duplicate request' } });
    const reason =
      begun.stored.status === 'pending' || begun.stored.status === 'streaming' ? 'answer-in-progress' : 'answer-exists';
    throw new ChatConflictError({ reason, messageId: begun.stored.message.id, status: begun.stored.status });
  }
  return { runId: run.id, assistantMessageId: begun.stored.message.id };
}
