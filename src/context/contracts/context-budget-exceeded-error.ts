import { AgentHistoryError } from '../../errors/agent-history-error.js';

/**
 * What may never be cut does not fit the budget: the newest user message, pinned messages and steering messages
 * (with the instructions and tool definitions already taken from the budget) need more tokens than the model
 * may be sent, even after every other message, reasoning, tool round and tool output was removed or shortened.
 * The engine raises it instead of sending an over-budget request. Shorten the instructions or the user's
 * message, unpin messages, or give a larger budget.
 */
export class ContextBudgetExceededError extends AgentHistoryError {
  /** The tokens left for messages (the budget minus instructions, tool definitions and reserves). */
  readonly messageBudgetTokens: number;
  /** The estimated tokens of what could not be cut. */
  readonly requiredTokens: number;
  constructor({ messageBudgetTokens, requiredTokens }: { messageBudgetTokens: number; requiredTokens: number }) {
    super({
      code: 'context-budget-exceeded',
      message: `The context cannot fit its budget: the newest user message and pinned messages need ${requiredTokens} tokens, but only ${messageBudgetTokens} are left for messages after the instructions, tool definitions, output reserve and safety margin.`,
    });
    this.messageBudgetTokens = messageBudgetTokens;
    this.requiredTokens = requiredTokens;
  }
}
