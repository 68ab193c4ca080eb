import { AgentHistoryError } from '../../errors/agent-history-error.js';

/** Why a chat request conflicts with what the thread already holds. */
export type ChatConflictReason =
  /** The request was already answered (a double submit or a retry): the stored answer is `messageId`. */
  | 'answer-exists'
  /** An answer is still streaming in this thread (`messageId`); wait for it, or stop it. */
  | 'answer-in-progress'
  /** The message id is already stored with different content. */
  | 'message-id-reused'
  /**
   * An approval response for a message that is not the thread's newest completed answer, or for an approval
   * already answered otherwise: `messageId` is the message named.
   */
  | 'approval-not-pending';

/**
 * A chat request conflicts with the thread's state. Nothing was written. Maps to HTTP 409; `messageId` and
 * `status` tell the client which stored message it can show instead.
 */
export class ChatConflictError extends AgentHistoryError {
  readonly reason: ChatConflictReason;
  /** The stored message the conflict is about. */
  readonly messageId: string;
  /** That message's status (`completed`, `streaming`, …). */
  readonly status: string;
  constructor({ reason, messageId, status }: { reason: ChatConflictReason; messageId: string; status: string }) {
    const text: Record<ChatConflictReason, string> = {
      'answer-exists': `This request was already answered: the answer is message ${JSON.stringify(messageId)} (${status}).`,
      'answer-in-progress': `An answer is still being written in this thread: message ${JSON.stringify(messageId)} (${status}).`,
      'message-id-reused': `The message id ${JSON.stringify(messageId)} is already stored with different content.`,
      'approval-not-pending': `Message ${JSON.stringify(messageId)} (${status}) has no pending approval to answer: only the thread's newest answer can be continued.`,
    };
    super({ code: `chat-${reason}`, message: text[reason] });
    this.reason = reason;
    this.messageId = messageId;
    this.status = status;
  }
}
