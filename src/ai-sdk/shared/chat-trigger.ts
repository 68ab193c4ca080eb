/** What starts a turn: a new (or edited) user message, or a regeneration of an answer. */
export type ChatTrigger = 'submit-message' | 'regenerate-message';
