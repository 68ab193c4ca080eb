/** What happens to the answer when the client goes away (a closed tab, a reload, a dropped connection). */
export type DisconnectBehavior =
  /** The model call runs to its end and the whole answer is stored `completed` (the AI SDK's `consumeStream`). */
  | 'continue'
  /** The model call is aborted and the partial answer is stored `cancelled`. */
  | 'cancel';
