import type { Span } from '@opentelemetry/api';
import type { StoredMessage } from '../../model/stored-rows.js';

/**
 * The names of a chat request's spans. `turn` is the route's whole request (ended when the answer is stored),
 * `authorize` the application's `getUserId` and `getHistory`; `plan`, `persist` and `stream` are the phases of
 * `streamChatTurn` (reading and checking the history and storing the user message; starting the run and the
 * assistant message; the model's answer until it is stored); `resume` is the route's replay of an answer in progress.
 */
export const CHAT_SPANS = {
  turn: 'agent-history.chat.turn',
  authorize: 'agent-history.chat.authorize',
  plan: 'agent-history.chat.plan',
  persist: 'agent-history.chat.persist',
  stream: 'agent-history.chat.stream',
  resume: 'agent-history.chat.resume',
} as const;

/** Sets how the answer ended (`completed`, `failed`, `cancelled`) on `span` once it is stored; settles with `done`. */
export async function recordAnswerStatus(done: Promise<StoredMessage>, span: Span): Promise<void> {
  const stored = await done;
  span.setAttribute('agent_history.message.status', stored.status);
}

/** `inSpan`'s options for a span that lasts until the answer is stored, and records how it ended. */
export const UNTIL_ANSWER_STORED = {
  until: ({ done }: { done: Promise<StoredMessage> }, span: Span) => recordAnswerStatus(done, span),
};
