import type { InferUIMessageChunk, UIMessage } from 'ai';
import type { StoredMessage } from '../../model/stored-rows.js';

/** A turn being answered. */
export interface ChatTurn<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The turn's thread. */
  threadId: string;
  /** The run started for this turn. */
  runId: string;
  /** The stored user message (its id may differ from the request's after an edit). */
  userMessageId: string;
  /** The id of the answer being streamed. */
  assistantMessageId: string;
  /** Messages this turn took out of the context (superseded by an edit or a regeneration). */
  excludedMessageIds: string[];
  /** The UI message stream for the client. */
  stream: ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
  /** The stream as an HTTP response (server-sent events), with the turn's ids in `x-agent-history-*` headers. */
  toResponse(init?: ResponseInit): Response;
  /** Settles when the answer is stored as completed, failed or cancelled. */
  done: Promise<StoredMessage>;
  /** Settles after `done` with the title written by `generateTitle` on the first exchange, or null. */
  title: Promise<string | null>;
}
