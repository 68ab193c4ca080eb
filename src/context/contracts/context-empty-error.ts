import { AgentHistoryError } from '../../errors/agent-history-error.js';

/**
 * No stored message is eligible for the model's context (an empty thread, or everything excluded), so there is
 * nothing to send: the AI SDK rejects an empty `messages` array. Store the user's message before building the
 * context.
 */
export class ContextEmptyError extends AgentHistoryError {
  /** How many stored messages were loaded. */
  readonly loadedMessages: number;
  constructor({ loadedMessages }: { loadedMessages: number }) {
    super({
      code: 'context-empty',
      message: `The context is empty: ${loadedMessages} stored messages were loaded and none is eligible; store the user's message first.`,
    });
    this.loadedMessages = loadedMessages;
  }
}
