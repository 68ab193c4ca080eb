import type { UIMessage, UIMessageStreamOnEndCallback } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { StoredMessagePart, StoredMetadata } from '../../schema/define-agent-tables.js';
import type { FinalStatus } from '../../store/assistant-lifecycle.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import type { AnswerPersistenceState } from './answer-persistence-state.js';
import { settleInterruptedParts } from './settle-interrupted-parts.js';
import { toRunUsage } from './message-usage.js';

/**
 * Stores the answer's outcome once the checkpoints queued before it are written: the message is finalized with
 * `status` (the parts of an answer that did not complete are settled, see {@link settleInterruptedParts}) and
 * the turn's usage in its metadata, and the run is finished with it (one `finalizeMessage` with `finishRun`) with
 * the message's final status, the usage and `error`. A message already finalized by a stop elsewhere is kept as it is, and returned.
 */
export async function finalizeAnswer(
  state: AnswerPersistenceState,
  status: FinalStatus,
  parts: StoredMessagePart[],
  metadata: StoredMetadata | undefined,
  error?: unknown,
): Promise<StoredMessage> {
  clearInterval(state.heartbeat);
  await state.writes;
  const { history, threadId, messageId, usageMetadataKey } = state;
  const withUsage =
    usageMetadataKey === false || Object.keys(state.usage).length === 0 || (metadata && usageMetadataKey in metadata)
      ? metadata
      : { ...metadata, [usageMetadataKey]: state.usage };
  const run = { usage: toRunUsage(state.usage), error: runErrorOf(error), ...state.observed };
  const answer = {
    status,
    parts:
      status === 'completed' ? parts : (settleInterruptedParts(parts as UIMessage['parts']) as StoredMessagePart[]),
    metadata: withUsage,
  };
  let stored: StoredMessage;
  try {
    // The answer and its run end together, in one statement where the database allows.
    return await history.finalizeMessage(threadId, messageId, { ...answer, finishRun: { runId: state.runId, ...run } });
  } catch (finalizeError) {
    if (!(finalizeError instanceof InvalidArgumentError)) throw finalizeError;
    // A usage the run refuses (a provider's negative count) does not cost the answer: it is stored, and finishRun
    // below reports the refusal. Otherwise the message was already finalized by a stop elsewhere: that row is the
    // answer, and the run ends with its status.
    stored = finalizeError.argument.startsWith('options.finishRun.')
      ? await history.finalizeMessage(threadId, messageId, answer)
      : await history.getMessage(threadId, messageId);
  }
  // A message still pending or streaming here was redacted while it was written: it takes no more content, and its
  // run ends failed (recovery marks the message failed once its lease has passed).
  const final = ['completed', 'failed', 'cancelled'].includes(stored.status);
  await history.finishRun(
    state.runId,
    final
      ? { status: stored.status as FinalStatus, ...run }
      : { ...run, status: 'failed', error: { message: 'The answer was redacted while it was being written.' } },
  );
  return stored;
}

/**
 * The UI stream's end callback: finalizes the answer with the stream's outcome (`completed` only when it
 * completed unaborted and uncancelled, `failed` with its error, `cancelled` otherwise) and settles `done`.
 */
export function finalizeAnswerOnEnd<UI_MESSAGE extends UIMessage>(
  state: AnswerPersistenceState,
  { responseMessage, isAborted, isCancelled, outcome }: Parameters<UIMessageStreamOnEndCallback<UI_MESSAGE>>[0],
): Promise<void> {
  state.ended = true;
  const status: FinalStatus =
    outcome.status === 'completed' && !isAborted && !isCancelled
      ? 'completed'
      : outcome.status === 'failed'
        ? 'failed'
        : 'cancelled';
  return settleAnswer(state, () => {
    const error = outcome.status === 'failed' ? (outcome.error ?? new Error('The model stream failed.')) : undefined;
    return finalizeAnswer(
      state,
      status,
      responseMessage.parts as StoredMessagePart[],
      responseMessage.metadata as StoredMetadata | undefined,
      error,
    );
  });
}

/**
 * Called when the server's copy of the UI stream has been read to its end: if the end callback did not run
 * (it should have), stores what the last checkpoint holds as `failed` and settles `done`.
 */
export async function finalizeAnswerWithoutOutcome(state: AnswerPersistenceState): Promise<void> {
  if (state.ended) return;
  // The UI stream closed without its end callback (it should not): store what the last checkpoint holds.
  await settleAnswer(state, () =>
    finalizeAnswer(
      state,
      'failed',
      state.checkpointed,
      undefined,
      new Error('The UI message stream ended without an outcome.'),
    ),
  );
}

// `done` must settle whatever happens, and a failure to store must also reach `onPersistError`: the caller may
// not be awaiting `done`.
async function settleAnswer(state: AnswerPersistenceState, finalization: () => Promise<StoredMessage>): Promise<void> {
  try {
    state.settle.resolve(await finalization());
  } catch (error) {
    state.onPersistError(error);
    state.settle.reject(error);
  }
}

// The run stores a plain object: an Error's name and message, or the text of anything else thrown.
function runErrorOf(error: unknown): { name?: string; message: string } | undefined {
  return error === undefined
    ? undefined
    : error instanceof Error
      ? { name: error.name, message: error.message }
      : { message: String(error) };
}
