import type { UIMessage } from 'ai';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import type { BegunChatAnswer } from '../chat-turn/begin-chat-answer.js';
import type { StreamChatTurnOptions } from '../chat-turn/chat-turn-options.js';
import { ChatConflictError } from '../shared/chat-conflict-error.js';
import type { ApprovalContinuation } from './approval-continuation.js';

/** Options of {@link continueChatAnswer}: the turn's store and run options, and the planned continuation. */
export interface ContinueChatAnswerOptions<UI_MESSAGE extends UIMessage> extends Pick<
  StreamChatTurnOptions<UI_MESSAGE>,
  'history' | 'run'
> {
  /** The turn's thread. */
  threadId: string;
  /** The planned continuation (the stored answer with the approval responses applied). */
  continuation: ApprovalContinuation<UI_MESSAGE>;
  /** The user message the answer follows, recorded in the run's metadata. */
  userMessageId: string;
}

/**
 * The continued answer; `recorded` when the responses were only stored (an approval is still pending), else
 * `reopen` moves it back to `streaming` under the run: call it once the model's first messages are built (the
 * context engine reads only finished answers) and before the model or an approved tool starts.
 */
export type ContinuedChatAnswer = BegunChatAnswer & { recorded?: StoredMessage; reopen?: () => Promise<void> };

/**
 * Stores the approval responses on the answer that requested them with a compare-and-set on its parts, so that
 * of two racing requests exactly one continues (the other is a {@link ChatConflictError}, nothing written). When
 * every approval is answered, a run is started to continue the same message; otherwise the responses are only
 * stored.
 */
export async function continueChatAnswer<UI_MESSAGE extends UIMessage>({
  history,
  threadId,
  continuation,
  userMessageId,
  run: runOptions,
}: ContinueChatAnswerOptions<UI_MESSAGE>): Promise<ContinuedChatAnswer> {
  const messageId = continuation.message.id;
  const parts = continuation.message.parts as unknown as StoredMessagePart[];
  const recorded = await history.reopenAssistantMessage(threadId, messageId, {
    expectedParts: continuation.expectedParts,
    parts,
  });
  if (!recorded.updated) throw conflict(recorded.stored);
  if (continuation.pending) return { runId: '', assistantMessageId: messageId, recorded: recorded.stored };
  const run = await history.startRun(threadId, {
    ...runOptions,
    metadata: { ...runOptions?.metadata, trigger: 'tool-approval-response', userMessageId, continues: messageId },
  });
  // The exclusive claim (completed → streaming): of racing requests past the first write, one continues.
  const reopen = async () => {
    const expectedParts = recorded.stored.message.parts as StoredMessagePart[];
    const result = await history.reopenAssistantMessage(threadId, messageId, { expectedParts, parts, runId: run.id });
    if (result.updated) return;
    await history.finishRun(run.id, { status: 'cancelled', error: { message: 'duplicate request' } });
    throw conflict(result.stored);
  };
  return { runId: run.id, assistantMessageId: messageId, reopen };
}

function conflict(stored: StoredMessage): ChatConflictError {
  const running = stored.status === 'pending' || stored.status === 'streaming';
  return new ChatConflictError({
    reason: running ? 'answer-in-progress' : 'answer-exists',
    messageId: stored.message.id,
    status: stored.status,
  });
}
