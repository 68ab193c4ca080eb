import {
  consumeStream,
  toUIMessageStream,
  type InferUIMessageChunk,
  type TextStreamPart,
  type ToolSet,
  type UIMessage,
} from 'ai';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import { answerMetadata } from './answer-metadata.js';
import { checkpointAnswer, createAnswerPersistenceState } from './answer-persistence-state.js';
import { createClientStream } from './create-client-stream.js';
import type { DisconnectBehavior } from './disconnect-behavior.js';
import type { ObservedModel } from './observed-model.js';
import { finalizeAnswerOnEnd, finalizeAnswerWithoutOutcome } from './finalize-answer.js';
import { resolveResumableStreamOptions, type ResumableStreamOptions } from '../shared/resumable-stream-options.js';
import { createStreamChunkLog, type StreamChunkLog } from '../resume/stream-chunk-log.js';

type UIStreamOptions<UI_MESSAGE extends UIMessage> = NonNullable<
  Parameters<typeof toUIMessageStream<ToolSet, UI_MESSAGE>>[0]
>;

/** Options of {@link persistUIMessageStream}. */
export interface PersistUIMessageStreamOptions<UI_MESSAGE extends UIMessage, TOOLS extends ToolSet = ToolSet> {
  /** The tenant's store. */
  history: TenantHistory;
  /** The thread the answer belongs to. */
  threadId: string;
  /** The run to finish with the outcome and the usage. */
  runId: string;
  /** The id of the assistant message begun with `beginAssistantMessage`; the stream uses it as its message id. */
  messageId: string;
  /** The model's stream: `result.stream` of `streamText` or of `agent.stream()`. */
  stream: ReadableStream<TextStreamPart<TOOLS>>;
  /** The tools, so that tool parts are typed and their output mapped. */
  tools?: TOOLS;
  /** The messages the answer follows (at least the user message it answers). */
  originalMessages: UI_MESSAGE[];
  /** Aborts the model call: used by a cross-process stop and by `onDisconnect: 'cancel'`. */
  abortController: AbortController;
  /** What happens to the answer when the client goes away. @default 'continue' */
  onDisconnect?: DisconnectBehavior;
  /** Metadata sent with the answer; the turn's usage is added under `usageMetadataKey` at the end. */
  messageMetadata?: UIStreamOptions<UI_MESSAGE>['messageMetadata'];
  /** The key under which the turn's token usage is added to the answer's metadata; `false` adds none. @default 'usage' */
  usageMetadataKey?: string | false;
  /** @default true */
  sendReasoning?: boolean;
  /** @default false */
  sendSources?: boolean;
  /** The error text sent to the client when the model fails. @default the AI SDK's ('An error occurred.') */
  onError?: (error: unknown) => string;
  /** How often the lease of the streaming message is renewed between steps. @default 20_000 ms */
  heartbeatMs?: number;
  /**
   * Called when a checkpoint or the finalization cannot be written (in a chat turn, also when the thread's title
   * cannot). @default console.error
   */
  onPersistError?: (error: unknown) => void;
  /**
   * What is known of the model (filled as the turn runs): recorded on the run with the stream's model id and
   * finish reason. @default the model id and finish reason from the stream only
   */
  observedModel?: ObservedModel;
  /**
   * Writes the stream's chunks to the store's chunk log as it goes, so that `resumeChatStream` can replay the answer
   * from another request or process (`useChat({ resume: true })`): the answer is resumable. @default false
   */
  resumable?: boolean | ResumableStreamOptions;
}

/** The stream to send to the client, and the stored answer once it is finalized. */
export interface PersistedUIMessageStream<UI_MESSAGE extends UIMessage> {
  /** The UI message stream to send to the client, unchanged; it is stored as it passes. */
  stream: ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
  /** Settles when the answer is stored as completed, failed or cancelled (also after a disconnect). */
  done: Promise<StoredMessage>;
}

/**
 * Turns a model stream into a UI message stream that persists itself: each finished step is checkpointed into
 * the assistant row (a crash loses at most one step), and the end finalizes it as `completed`, `failed` or
 * `cancelled` (an abort keeps the partial parts) with the usage on the run and in the message metadata.
 * The stream is consumed on the server whatever the client does, so a disconnect does not lose the answer.
 */
export function persistUIMessageStream<UI_MESSAGE extends UIMessage, TOOLS extends ToolSet = ToolSet>({
  history,
  threadId,
  runId,
  messageId,
  stream,
  tools,
  originalMessages,
  abortController,
  onDisconnect = 'continue',
  messageMetadata,
  usageMetadataKey = 'usage',
  sendReasoning = true,
  sendSources = false,
  onError,
  heartbeatMs = 20_000,
  onPersistError = (error) => console.error('agent-history: could not persist the answer', error),
  observedModel = {},
  resumable,
}: PersistUIMessageStreamOptions<UI_MESSAGE, TOOLS>): PersistedUIMessageStream<UI_MESSAGE> {
  const state = createAnswerPersistenceState({
    history,
    threadId,
    runId,
    messageId,
    abortController,
    usageMetadataKey,
    heartbeatMs,
    onPersistError,
    observed: observedModel,
  });
  const uiStream = toUIMessageStream<TOOLS, UI_MESSAGE>({
    stream,
    tools,
    originalMessages,
    generateMessageId: () => messageId,
    messageMetadata: ({ part }) => answerMetadata(state, part, messageMetadata),
    sendReasoning,
    sendSources,
    onError,
    onStepEnd: ({ responseMessage }) =>
      checkpointAnswer(state, structuredClone(responseMessage.parts) as StoredMessagePart[]),
    onEnd: (end) => finalizeAnswerOnEnd(state, end),
  });

  const [toClient, toServer] = uiStream.tee();
  const resume = resolveResumableStreamOptions(resumable);
  const log = resume && createStreamChunkLog({ history, threadId, messageId, options: resume, onPersistError });
  void consumeStream({ stream: log ? recordChunks(toServer, log) : toServer, onError: () => {} }).then(() =>
    finalizeAnswerWithoutOutcome(state),
  );
  return { stream: createClientStream(toClient, onDisconnect, abortController), done: state.done };
}

// The server's copy passes through the chunk log; the log is closed (its final batch written) when the copy ends.
function recordChunks<CHUNK>(stream: ReadableStream<CHUNK>, log: StreamChunkLog): ReadableStream<CHUNK> {
  return stream.pipeThrough(
    new TransformStream<CHUNK, CHUNK>({
      transform(chunk, controller) {
        log.push(chunk);
        controller.enqueue(chunk);
      },
      flush: () => log.close(),
    }),
  );
}
