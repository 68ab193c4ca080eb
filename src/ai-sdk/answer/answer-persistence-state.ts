import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import type { MessageUsage } from './message-usage.js';
import type { ObservedModel } from './observed-model.js';

/** What {@link createAnswerPersistenceState} needs: the answer's rows and how to write them. */
export interface CreateAnswerPersistenceStateOptions {
  /** The tenant's store. */
  history: TenantHistory;
  /** The thread the answer belongs to. */
  threadId: string;
  /** The run to finish with the outcome and the usage. */
  runId: string;
  /** The id of the assistant message being streamed. */
  messageId: string;
  /** Aborts the model call when a checkpoint finds the message finalized elsewhere. */
  abortController: AbortController;
  /** The key under which the turn's usage is added to the answer's metadata; `false` adds none. */
  usageMetadataKey: string | false;
  /** How often the lease of the streaming message is renewed between steps. */
  heartbeatMs: number;
  /** Called when a checkpoint or the finalization cannot be written. */
  onPersistError: (error: unknown) => void;
  /** What the turn learns about its model (provider, model id, finish reason), recorded on the run. */
  observed: ObservedModel;
}

/**
 * The state a persisted UI message stream shares between its callbacks: the metadata of each part, the end of
 * each step, the end of the stream, the heartbeat and the server's reader. The fields of
 * {@link CreateAnswerPersistenceStateOptions} are fixed; `checkpointed` and `writes` change only through
 * {@link checkpointAnswer}, `usage` as each step finishes, and `ended` when the stream's end callback runs.
 */
export interface AnswerPersistenceState extends Readonly<Omit<CreateAnswerPersistenceStateOptions, 'heartbeatMs'>> {
  /** The usage of the steps finished so far, summed. */
  usage: MessageUsage;
  /** The parts of the last checkpoint written: what the heartbeat rewrites, and what a stream without an end stores. */
  checkpointed: StoredMessagePart[];
  /** The checkpoint writes, chained so that they land in order and the finalization waits for the last one. */
  writes: Promise<void>;
  /** Whether the UI stream's end callback ran (then it, not the server's reader, finalizes the answer). */
  ended: boolean;
  /** The timer renewing the lease; the finalization stops it. */
  readonly heartbeat: ReturnType<typeof setInterval>;
  /** Settles {@link AnswerPersistenceState.done}. */
  readonly settle: { resolve: (stored: StoredMessage) => void; reject: (error: unknown) => void };
  /** Settles when the answer is stored as completed, failed or cancelled. */
  readonly done: Promise<StoredMessage>;
}

/** The state of an answer that has just begun streaming; its heartbeat starts now. */
export function createAnswerPersistenceState({
  history,
  threadId,
  runId,
  messageId,
  abortController,
  usageMetadataKey,
  heartbeatMs,
  onPersistError,
  observed,
}: CreateAnswerPersistenceStateOptions): AnswerPersistenceState {
  let settle!: AnswerPersistenceState['settle'];
  const done = new Promise<StoredMessage>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => {});
  const state: AnswerPersistenceState = {
    history,
    threadId,
    runId,
    messageId,
    abortController,
    usageMetadataKey,
    onPersistError,
    observed,
    usage: {},
    checkpointed: [],
    writes: Promise.resolve(),
    ended: false,
    heartbeat: setInterval(() => void checkpointAnswer(state, state.checkpointed), heartbeatMs),
    settle,
    done,
  };
  state.heartbeat.unref?.();
  return state;
}

/**
 * Writes `parts` into the streaming assistant row after the writes already queued (which also renews its
 * lease), and remembers them as the last checkpoint once written. A message finalized elsewhere (a stop handled
 * by another process) aborts this model call; any other failure goes to `onPersistError`.
 */
export function checkpointAnswer(state: AnswerPersistenceState, parts: StoredMessagePart[]): Promise<void> {
  state.writes = state.writes
    .then(() => state.history.checkpointMessage(state.threadId, state.messageId, { parts }))
    .then(
      () => {
        state.checkpointed = parts;
      },
      (error: unknown) => {
        // The message was finalized elsewhere (a stop handled by another process): stop this model call too.
        if (error instanceof InvalidArgumentError) state.abortController.abort();
        else state.onPersistError(error);
      },
    );
  return state.writes;
}
