import {
  consumeStream,
  toUIMessageStream,
  type InferUIMessageChunk,
  type TextStreamPart,
  type ToolSet,
  type UIMessage,
} from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import type { TenantHistory } from '../store/tenant-history.js';
import type { FinalStatus } from '../store/assistant-lifecycle.js';
import type { StoredMessage } from '../model/stored-rows.js';
import { settleInterruptedParts } from './settle-interrupted-parts.js';
import { addUsage, toMessageUsage, toRunUsage, type MessageUsage } from './usage.js';

type UIStreamOptions<UI_MESSAGE extends UIMessage> = NonNullable<
  Parameters<typeof toUIMessageStream<ToolSet, UI_MESSAGE>>[0]
>;

/** What happens to the answer when the client goes away (a closed tab, a reload, a dropped connection). */
export type DisconnectBehavior =
  /** The model call runs to its end and the whole answer is stored `completed` (the AI SDK's `consumeStream`). */
  | 'continue'
  /** The model call is aborted and the partial answer is stored `cancelled`. */
  | 'cancel';

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
  /** @default 'continue' */
  onDisconnect?: DisconnectBehavior;
  /** Metadata sent with the answer; the turn's usage is added under `usage` at the end. */
  messageMetadata?: UIStreamOptions<UI_MESSAGE>['messageMetadata'];
  /** The key under which the turn's token usage is added to the answer's metadata; `false` adds none. @default 'usage' */
  usageMetadataKey?: string | false;
  /** @default true */
  sendReasoning?: boolean;
  /** @default false */
  sendSources?: boolean;
  /** The error text sent to the client. @default the AI SDK's ('An error occurred.') */
  onError?: (error: unknown) => string;
  /** How often the lease of the streaming message is renewed between steps. @default 20_000 ms */
  heartbeatMs?: number;
  /** Called when a checkpoint or the finalization cannot be written. @default console.error */
  onPersistError?: (error: unknown) => void;
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
}: PersistUIMessageStreamOptions<UI_MESSAGE, TOOLS>): PersistedUIMessageStream<UI_MESSAGE> {
  let usage: MessageUsage = {};
  let checkpointed: StoredMessagePart[] = [];
  let writes: Promise<void> = Promise.resolve();
  let settle!: { resolve: (stored: StoredMessage) => void; reject: (error: unknown) => void };
  const done = new Promise<StoredMessage>((resolve, reject) => (settle = { resolve, reject }));
  done.catch(() => {});

  const checkpoint = (parts: StoredMessagePart[]) => {
    writes = writes
      .then(() => history.checkpointMessage(threadId, messageId, { parts }))
      .then(
        () => {
          checkpointed = parts;
        },
        (error: unknown) => {
          // The message was finalized elsewhere (a stop handled by another process): stop this model call too.
          if (error instanceof InvalidArgumentError) abortController.abort();
          else onPersistError(error);
        },
      );
    return writes;
  };
  const heartbeat = setInterval(() => void checkpoint(checkpointed), heartbeatMs);
  heartbeat.unref?.();

  const metadataOf = ({ part }: { part: TextStreamPart<ToolSet> }) => {
    if (part.type === 'finish-step') usage = addUsage(usage, toMessageUsage(part.usage));
    const own = messageMetadata?.({ part });
    if (part.type !== 'finish' || usageMetadataKey === false) return own;
    return { ...(own as object | undefined), [usageMetadataKey]: toMessageUsage(part.totalUsage) } as typeof own;
  };

  let ended = false;
  const finalize = async (
    status: FinalStatus,
    parts: StoredMessagePart[],
    metadata: StoredMetadata | undefined,
    error?: unknown,
  ) => {
    clearInterval(heartbeat);
    await writes;
    const withUsage =
      usageMetadataKey === false || Object.keys(usage).length === 0 || (metadata && usageMetadataKey in metadata)
        ? metadata
        : { ...metadata, [usageMetadataKey]: usage };
    let stored: StoredMessage;
    try {
      stored = await history.finalizeMessage(threadId, messageId, {
        status,
        parts:
          status === 'completed' ? parts : (settleInterruptedParts(parts as UIMessage['parts']) as StoredMessagePart[]),
        metadata: withUsage,
      });
    } catch (finalizeError) {
      // Already finalized by a stop elsewhere: that row is the answer.
      if (!(finalizeError instanceof InvalidArgumentError)) throw finalizeError;
      stored = await history.getMessage(threadId, messageId);
    }
    const runError =
      error === undefined
        ? undefined
        : error instanceof Error
          ? { name: error.name, message: error.message }
          : { message: String(error) };
    await history.finishRun(runId, { status: stored.status as FinalStatus, usage: toRunUsage(usage), error: runError });
    return stored;
  };

  const uiStream = toUIMessageStream<TOOLS, UI_MESSAGE>({
    stream,
    tools,
    originalMessages,
    generateMessageId: () => messageId,
    messageMetadata: metadataOf as UIStreamOptions<UI_MESSAGE>['messageMetadata'],
    sendReasoning,
    sendSources,
    onError,
    onStepEnd: ({ responseMessage }) => checkpoint(structuredClone(responseMessage.parts) as StoredMessagePart[]),
    onEnd: async ({ responseMessage, isAborted, isCancelled, outcome }) => {
      ended = true;
      const status: FinalStatus =
        outcome.status === 'completed' && !isAborted && !isCancelled
          ? 'completed'
          : outcome.status === 'failed'
            ? 'failed'
            : 'cancelled';
      try {
        const error =
          outcome.status === 'failed' ? (outcome.error ?? new Error('The model stream failed.')) : undefined;
        settle.resolve(
          await finalize(
            status,
            responseMessage.parts as StoredMessagePart[],
            responseMessage.metadata as StoredMetadata | undefined,
            error,
          ),
        );
      } catch (error) {
        onPersistError(error);
        settle.reject(error);
      }
    },
  });

  const [toClient, toServer] = uiStream.tee();
  void consumeStream({ stream: toServer, onError: () => {} }).then(async () => {
    if (ended) return;
    // The UI stream closed without its end callback (it should not): store what the last checkpoint holds.
    try {
      settle.resolve(
        await finalize('failed', checkpointed, undefined, new Error('The UI message stream ended without an outcome.')),
      );
    } catch (error) {
      onPersistError(error);
      settle.reject(error);
    }
  });

  const reader = toClient.getReader();
  const clientStream = new ReadableStream<InferUIMessageChunk<UI_MESSAGE>>({
    async pull(controller) {
      const { done: finished, value } = await reader.read();
      if (finished) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      if (onDisconnect === 'cancel') abortController.abort(reason);
      // Not awaited: a tee branch's cancel settles only when the other branch (the server's) ends too.
      void reader.cancel(reason).catch(() => {});
    },
  });
  return { stream: clientStream, done };
}
