import type { UIMessage } from 'ai';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';

/** The stored answer a tool approval response continues. */
export interface ApprovalContinuation<UI_MESSAGE extends UIMessage> {
  /** The stored answer with the responses applied: the same id, the stored parts, the new approval states. */
  message: UI_MESSAGE;
  /** The parts stored when the request was planned (the compare-and-set of `reopenAssistantMessage`). */
  expectedParts: StoredMessagePart[];
  /** An approval of the answer is still unanswered: the responses are stored, the model is not called yet. */
  pending: boolean;
}
