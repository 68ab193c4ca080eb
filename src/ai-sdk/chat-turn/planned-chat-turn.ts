import type { UIMessage } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { ApprovalContinuation } from '../approvals/approval-continuation.js';
import type { ChatTrigger } from '../shared/chat-trigger.js';
import type { IncomingMessagePolicy } from '../ui-messages/screen-incoming-message.js';
import type { ChatSchemas } from '../ui-messages/validate-chat-messages.js';

/** Input of {@link planChatTurn} (internal: `streamChatTurn` builds it from its options). */
export interface PlanChatTurnInput<UI_MESSAGE extends UIMessage>
  extends ChatSchemas<UI_MESSAGE>, IncomingMessagePolicy {
  /** The tenant's store. */
  history: TenantHistory;
  /** The thread of the turn. */
  threadId: string;
  /** A new (or edited) user message, or a regeneration. */
  trigger: ChatTrigger;
  /** The user message as the client sent it (validated here); required for `submit-message`. */
  message?: unknown;
  /** The message to edit (`submit-message`) or the answer to regenerate (`regenerate-message`). */
  messageId?: string;
  /** Makes a retried request idempotent (stored as the message's `clientRequestId`, as `request:<requestId>`). */
  requestId?: string;
  /** How many stored messages are read to validate the new one against. */
  historyLimit: number;
  /** How many bytes of stored messages (their `byteSize`) are read at most, newest first; the newest is always read. */
  historyMaxBytes: number;
  /** Makes the id of the assistant answer. */
  generateMessageId: () => string;
}

/** A turn ready to be answered: the user message is stored, superseded messages are excluded. */
export interface PlannedChatTurn<UI_MESSAGE extends UIMessage> {
  /** The stored user message the answer is for. */
  userMessage: UI_MESSAGE;
  /** The thread's eligible messages the model may see, oldest first, ending with `userMessage`. */
  contextMessages: UI_MESSAGE[];
  /** The idempotency key of the answer (its `clientRequestId`). */
  answerKey: string;
  /** Messages this turn took out of the context (superseded by the edit or the regeneration). */
  excludedMessageIds: string[];
  /** For a tool approval response (an assistant message): the stored answer the turn continues. */
  continuation?: ApprovalContinuation<UI_MESSAGE>;
}
