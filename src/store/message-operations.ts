import type { IndexPendingMessagesOptions, IndexPendingResult } from './search-indexing.js';
import type { StoredMessage } from '../model/stored-rows.js';
import type { AppendMessageOptions, AppendResult } from './append-message.js';
import type {
  BeginAssistantMessageOptions,
  CheckpointMessageOptions,
  FinalizeMessageOptions,
} from './assistant-lifecycle.js';
import type { AuditOptions } from './audit.js';
import type { GetMessageOptions, ListMessagesOptions, MessagePage } from './list-messages.js';
import type { ChatWindowPage, ListChatMessagesOptions } from './list-chat-messages.js';
import type { StreamToolPayloadOptions, ToolPayloadStream } from './stream-tool-payload.js';
import type { ExcludeMessagesOptions } from './message-state.js';
import type { RedactMessageOptions } from './redact-message.js';
import type { ReopenAssistantMessageOptions, ReopenResult } from './reopen-assistant-message.js';
import type { SearchHit, SearchMessagesOptions } from './search-messages.js';
import type { AppendableMessage } from '../model/stored-rows.js';

/**
 * The message log of one tenant: the part of `TenantHistory` that appends messages, runs the assistant
 * message lifecycle, reads and searches the log, takes messages in and out of the model's context, and redacts.
 */
export interface MessageOperations {
  /**
   * Appends one `UIMessage` in one statement: the next sequence is taken from the thread row atomically with the
   * insert, so sequences are gapless and unique under any concurrency. Idempotent by message id and by
   * `clientRequestId`: a retry (or two identical requests racing) gets the stored row back with `created: false`.
   * The message is the value appended, not an option, so it is an argument of its own.
   *
   * @throws {InvalidMessageError} The message is malformed (names the path and the value): parts not an array, an
   * unknown role, a NUL character, a lone surrogate, metadata not a JSON object…
   * @throws {MessageTooLargeError} Its parts and metadata serialize to more than `maxMessageBytes`.
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted, or `runId` names no run of it.
   * @throws {InvalidArgumentError} `runId` is not a uuid, `clientRequestId` is not a string of 1 to 200
   * characters, `status` is not a message status, or `pinned` is not a boolean.
   * @example
   * const { stored, created } = await store.appendMessage(thread.id, userMessage, { clientRequestId: requestId });
   */
  appendMessage<UI_MESSAGE extends AppendableMessage>(
    threadId: string,
    message: UI_MESSAGE,
    options?: AppendMessageOptions,
  ): Promise<AppendResult<UI_MESSAGE>>;

  /**
   * Appends an empty assistant message in `pending` state, holding a lease for `leaseMs`: call it before streaming
   * the answer, then `checkpointMessage` while it streams and `finalizeMessage` when it ends. Idempotent.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted, or `runId` names no run of it.
   * @throws {InvalidMessageError} `messageId` or `metadata` is malformed.
   * @throws {InvalidArgumentError} `runId` is not a uuid or `clientRequestId` is not a string of 1 to 200 characters.
   * @example
   * await store.beginAssistantMessage(thread.id, { messageId, runId: run.id });
   */
  beginAssistantMessage(threadId: string, options: BeginAssistantMessageOptions): Promise<AppendResult>;

  /**
   * Saves the parts streamed so far (status `streaming`) and renews the lease, so a crash loses at most what came
   * after the last checkpoint. Only a `pending` or `streaming` message that has not been redacted takes one. Never
   * refused for its size: tool payloads that do not fit `maxMessageBytes` are stored as previews.
   *
   * @throws {NotFoundError} The thread or the message is missing or another tenant's.
   * @throws {InvalidArgumentError} The message is no longer pending or streaming, or was redacted while streaming.
   * @throws {InvalidMessageError} `parts` or `metadata` is malformed.
   */
  checkpointMessage(threadId: string, messageId: string, options: CheckpointMessageOptions): Promise<StoredMessage>;

  /**
   * Ends an assistant message as `completed`, `failed` or `cancelled` (an abort keeps the partial parts) and
   * stores its token count (oversized tool payloads as previews, as for a checkpoint). Finalizing again with the same status returns the stored message (a retried `onEnd`).
   *
   * @throws {NotFoundError} The thread or the message is missing or another tenant's.
   * @throws {InvalidArgumentError} `status` is not completed, failed or cancelled; or the message already ended
   * with another status, or was redacted while streaming.
   * @throws {InvalidMessageError} `parts` or `metadata` is malformed.
   * @example
   * await store.finalizeMessage(thread.id, messageId, { status: isAborted ? 'cancelled' : 'completed', parts });
   */
  finalizeMessage(threadId: string, messageId: string, options: FinalizeMessageOptions): Promise<StoredMessage>;

  /**
   * Records tool approval responses on a `completed`, eligible assistant message and, with `runId`, reopens it
   * (`streaming` under that run, with a lease) so that the same message is continued, checkpointed and finalized
   * again. A compare-and-set on `expectedParts`: of two racing callers exactly one gets `updated: true`; the
   * other gets the message as it is now. The chat route uses it for approvals; an app rarely calls it itself.
   *
   * @throws {NotFoundError} The thread or the message is missing or another tenant's.
   * @throws {InvalidArgumentError} `runId` is not a uuid, or `expectedParts` is not an array.
   * @throws {InvalidMessageError} `parts` is malformed.
   * @example
   * const { updated } = await store.reopenAssistantMessage(thread.id, messageId, { expectedParts, parts, runId });
   */
  reopenAssistantMessage(
    threadId: string,
    messageId: string,
    options: ReopenAssistantMessageOptions,
  ): Promise<ReopenResult>;

  /**
   * Marks as `failed` every pending or streaming message of the tenant whose lease has expired (its writer died),
   * keeping the parts it had checkpointed, and ends as `failed` (error `AbandonedRun`) the runs that died with
   * them: their messages' runs, and every `running` run without a pending or streaming message whose last message
   * (or start) is older than `leaseMs`. Deletes the chunk logs of those answers and of answers that ended more than
   * `leaseMs` ago. Returns the recovered messages, in sequence order.
   */
  recoverAbandonedMessages(): Promise<StoredMessage[]>;

  /**
   * Takes messages out of the model's context; they stay in the log and in the history UI (a regenerate or an edit
   * supersedes, never deletes). All the messages change, or none. Audited, one event per message.
   *
   * @throws {NotFoundError} The thread or one of the messages is missing or another tenant's.
   * @throws {InvalidArgumentError} `messageIds` is not a non-empty array of message ids, `reason` is not a string of
   * 1 to 500 characters, or one of the messages is redacted.
   * @example
   * await store.excludeMessages(thread.id, [oldAnswerId], { reason: 'superseded-by-regenerate' });
   */
  excludeMessages(threadId: string, messageIds: string[], options: ExcludeMessagesOptions): Promise<StoredMessage[]>;

  /**
   * Brings excluded messages back into the model's context. All the messages change, or none. Audited.
   *
   * @throws {NotFoundError} The thread or one of the messages is missing or another tenant's.
   * @throws {InvalidArgumentError} `messageIds` is not a non-empty array of message ids, or one of them is redacted.
   */
  includeMessages(threadId: string, messageIds: string[], options?: AuditOptions): Promise<StoredMessage[]>;

  /**
   * Pins a message: it is in the model's context on every step, whatever the budget selects. Pinning a pinned
   * message again returns it as it is.
   *
   * @throws {NotFoundError} The message is missing from the thread, or the thread is another tenant's.
   * @example
   * await store.pinMessage(thread.id, 'm-instructions');
   */
  pinMessage(threadId: string, messageId: string): Promise<StoredMessage>;

  /**
   * Unpins a message: it is in the model's context again only when the budget selects it.
   *
   * @throws {NotFoundError} The message is missing from the thread, or the thread is another tenant's.
   */
  unpinMessage(threadId: string, messageId: string): Promise<StoredMessage>;

  /**
   * One message by its `UIMessage.id`; with `include: 'payloads'`, its tool payloads kept in `agent_tool_payload`
   * are put back whole in place of their previews.
   *
   * @throws {NotFoundError} The thread (missing, another tenant's, soft-deleted) or the message is not found.
   * @throws {InvalidArgumentError} `include` is not `'payloads'`.
   */
  getMessage(threadId: string, messageId: string, options?: GetMessageOptions): Promise<StoredMessage>;

  /**
   * A page of a thread's messages, newest first, keyset on the sequence (never OFFSET): pass the page's
   * `nextCursor` as `before` for the next, older page.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `limit` is not an integer from 1 to 500, `before` or `maxBytes` is not a positive
   * integer, or `roles` is not a non-empty array of message roles.
   * @example
   * const { messages, nextCursor } = await store.listMessages(thread.id, { limit: 30 });
   */
  listMessages(threadId: string, options?: ListMessagesOptions): Promise<MessagePage>;

  /**
   * A page of a thread as a chat window shows it: each `UIMessage` with its sequence, status, context state and time,
   * oldest first within the page, pages newest first, keyset on the sequence (pass `nextCursor` as `before` for the
   * next, older page). It reads what a chat window needs and nothing more, so it costs less than `listMessages`
   * (whose rows hold every stored field); `loadThreadPage` validates its messages for `useChat`.
   *
   * @throws {NotFoundError} The thread is missing, another tenant's or soft-deleted.
   * @throws {InvalidArgumentError} `limit` is not an integer from 1 to 500, `before` is not a positive integer, or
   * `onlyEligible` is not a boolean.
   * @example
   * const { messages, nextCursor } = await store.listChatMessages(thread.id, { limit: 30, onlyEligible: true });
   */
  listChatMessages(threadId: string, options?: ListChatMessagesOptions): Promise<ChatWindowPage>;

  /**
   * Streams one tool payload that did not fit its message (the part holds a preview) and that the store kept in
   * `agent_tool_payload`: its JSON text, one chunk per read, so memory stays bounded whatever its size.
   *
   * @throws {NotFoundError} The thread, the message or the payload is missing or another tenant's or user's.
   * @throws {InvalidArgumentError} `toolCallId` is not a non-empty string or `field` is not input, output or rawInput.
   * @example
   * const { stream } = await store.streamToolPayload(thread.id, messageId, { toolCallId: 'call-1' });
   * return new Response(stream.pipeThrough(new TextEncoderStream()));
   */
  streamToolPayload(threadId: string, messageId: string, options: StreamToolPayloadOptions): Promise<ToolPayloadStream>;

  /**
   * Full-text search over the text parts of the tenant's messages (reasoning and tool traffic are not indexed),
   * with web-search syntax (`"exact phrase"`, `or`, `-word`): any non-empty string is a valid query. Ranked, with
   * HTML snippets; deleted threads and messages are left out. The query is the value searched, so it is an argument.
   *
   * @throws {InvalidArgumentError} `query` is empty, longer than 1000 characters, or holds NUL or a lone surrogate;
   * `limit` is not an integer from 1 to 100; or `userId` is not a short string.
   * @throws {NotFoundError} `threadId` is not a uuid.
   * @example
   * const hits = await store.searchMessages('"return policy" -draft', { userId: 'u1' });
   */
  searchMessages(query: string, options?: SearchMessagesOptions): Promise<SearchHit[]>;

  /**
   * Computes the search vector of up to `limit` of the tenant's messages stored without one (a store with
   * `search: 'background'`, `'deferred'` or `false` appends none), in one statement and commit; returns how many.
   * A message still pending or streaming is left for after its finalize (each checkpoint writes its parts again).
   * Searches match those messages either way: indexing only makes them fast. Call it from a job while `remaining`.
   *
   * @throws {InvalidArgumentError} `limit` is not an integer from 1 to 100000.
   * @example
   * while ((await store.indexPendingMessages({ limit: 500 })).remaining);
   */
  indexPendingMessages(options?: IndexPendingMessagesOptions): Promise<IndexPendingResult>;

  /**
   * Redacts a message: the whole text, or the given spans, is replaced in its parts and metadata (spans also in the
   * thread's title and metadata, its runs' errors and metadata and its snapshots' JSON); its context state becomes
   * `redacted`, its `contentVersion` goes up by one, every summary covering it is wiped and marked stale, every
   * snapshot covering it marked stale, and an audit event records who and why (never what). The original and
   * every copy `forkThread` made of it (through any chain of forks, whatever threads were deleted since) are
   * redacted the same way, and no other message. Spans match inside every JSON string, number, boolean, null and key.
   *
   * @throws {NotFoundError} The thread (missing, another tenant's, soft-deleted) or the message is not found.
   * @throws {InvalidArgumentError} `spans` is not a non-empty array of non-empty strings, `actor` or `reason` is
   * empty, or `replacement` is longer than 1000 characters, holds NUL or a lone surrogate, or contains a span.
   * @example
   * await store.redactMessage(thread.id, 'm-7', { spans: [cardNumber], actor: 'support:42', reason: 'PCI' });
   */
  redactMessage(threadId: string, messageId: string, options: RedactMessageOptions): Promise<StoredMessage>;
}
