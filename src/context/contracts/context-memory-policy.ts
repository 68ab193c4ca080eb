/** The optional memory step: relevant earlier messages found by the store's search. */
export interface ContextMemoryPolicy {
  /**
   * `search` asks `store.searchMessages` with the current input's text; `off` skips the step.
   * @default 'off'
   */
  mode: 'off' | 'search';
  /**
   * How many messages to ask for.
   * @default 5
   */
  limit: number;
  /**
   * The largest memory message, in raw tokens.
   * @default 2000
   */
  maxTokens: number;
  /**
   * Characters quoted from one message.
   * @default 1000
   */
  messageCharacters: number;
  /**
   * Whether the working memory the store keeps (`store.loadMemory`, a document the model updates with the
   * `updateWorkingMemory` tool) goes in the context, as a `user` message after the instructions. It yields to the
   * history: when the budget is short it goes whole, after every recalled item and before any turn. Off until you
   * turn it on: the store is then asked at every model call.
   * @default 'off'
   */
  workingMemory: 'include' | 'off';
  /** See {@link ContextRecallPolicy}. */
  recall: ContextRecallPolicy;
}

/** Items recalled from the same user's other threads for the newest user input (`store.loadMemory`). */
export interface ContextRecallPolicy {
  /**
   * `auto` recalls with what the store offers (full-text, or hybrid when it has an embedding model); `off` recalls
   * nothing. Off until you turn it on: a user's other conversations reach the model only when the app asks for it.
   * @default 'off'
   */
  mode: 'auto' | 'off';
  /**
   * How many items to ask for.
   * @default 5
   */
  limit: number;
  /**
   * The most raw tokens all recalled items take together; lower-scored items are left out to stay under it. Each
   * item is a `user` message of its own, after the working memory, best first; when the budget is short they go
   * whole, lowest score first, before the working memory and before any turn.
   * @default 2000
   */
  maxTokens: number;
}

/** A partial memory policy: any field left out takes its default. */
export type ContextMemoryPolicyInput = Partial<Omit<ContextMemoryPolicy, 'recall'>> & {
  /** See {@link ContextRecallPolicy}. */
  recall?: Partial<ContextRecallPolicy>;
};
