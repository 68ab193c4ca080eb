import type { UIMessage } from 'ai';
import type { ApprovalContinuation } from '../approvals/approval-continuation.js';
import type { IncomingMessagePolicy } from '../ui-messages/screen-incoming-message.js';
import type { ChatSchemas } from '../ui-messages/validate-chat-messages.js';
import type { StreamChatTurnOptions } from './chat-turn-options.js';

/**
 * Input of `planChatTurn` (internal): the turn's options as `streamChatTurn` takes them, with the thread id mapped by
 * `chatThreadId` and the defaults applied.
 */
export interface PlanChatTurnInput<UI_MESSAGE extends UIMessage>
  extends
    ChatSchemas<UI_MESSAGE>,
    IncomingMessagePolicy,
    Pick<StreamChatTurnOptions<UI_MESSAGE>, 'history' | 'threadId' | 'message' | 'messageId' | 'requestId'>,
    Required<
      Pick<StreamChatTurnOptions<UI_MESSAGE>, 'trigger' | 'historyLimit' | 'historyMaxBytes' | 'generateMessageId'>
    > {}

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
