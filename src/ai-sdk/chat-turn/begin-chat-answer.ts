import { ChatConflictError } from '../shared/chat-conflict-error.js';
import type { StreamChatTurnOptions } from './chat-turn-options.js';

/** Options of {@link beginChatAnswer}: the turn's store, run options and message ids, and what the plan decided. */
export interface BeginChatAnswerOptions
  extends
    Pick<StreamChatTurnOptions, 'history' | 'run'>,
    Required<Pick<StreamChatTurnOptions, 'trigger' | 'generateMessageId'>> {
  /** The turn's thread. */
  threadId: string;
  /** The stored user message the answer follows, recorded in the run's metadata. */
  userMessageId: string;
  /** The answer's idempotency key (the planned turn's `answerKey`), stored as its `clientRequestId`. */
  answerKey: string;
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
