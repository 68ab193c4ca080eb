// The strategies the prompt-cache bench compares, each replaying a session call by call as a chat route would:
// at each turn the user message is stored, the request is built and sent, every step appends its messages, and
// the answer is stored when the turn ends. The context engine builds each request from the store (a new engine per
// request, summaries by a deterministic summarizer); the others convert the stored messages with the AI SDK and
// manage the whole list at every call.
import { pruneMessages, type ModelMessage, type UIMessage } from 'ai';
import type { ContextPolicyInput } from '../../src/context/contracts/context-policy.js';
import { createMemoryContextStore } from '../../src/testing/index.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { appendCounted, engineFor } from '../../test/support/carried-cut-threads.js';
import { emptyTally, record, tokensOf, type Tally } from './cache-tally.js';
import type { Session } from './sessions.js';
import { unmanagedRequests } from './bound-layout.js';

export type Strategy = (session: Session, budget: number, tokenCounter: TokenCounter) => Promise<Tally>;

/** The context engine with a policy. */
export const engineStrategy =
  (policy: ContextPolicyInput = {}): Strategy =>
  async (session, budget, tokenCounter) => {
    const tally = emptyTally();
    const store = createMemoryContextStore();
    const append = (message: UIMessage) => appendCounted(store, message, tokenCounter);
    let previous: ModelMessage[] | undefined;
    for (const turn of session.turns) {
      append(turn.user);
      const { engine } = engineFor(store, { budget, summarize: true, policy, tokenCounter });
      let messages = (await engine.buildInitialContext()).messages;
      record(tally, previous, messages, budget);
      previous = messages;
      for (const [index, step] of turn.steps.entries()) {
        const input = [...messages, ...step];
        messages = (await engine.prepareStep({ messages: input, stepNumber: index + 1 })).messages ?? input;
        record(tally, previous, messages, budget);
        previous = messages;
      }
      if (turn.answer) append(turn.answer);
    }
    return tally;
  };

/** A strategy that manages the whole converted history at every call (the requests of no management). */
const managed =
  (manage: (messages: ModelMessage[], budget: number) => ModelMessage[]): Strategy =>
  async (session, budget) => {
    const tally = emptyTally();
    let previous: ModelMessage[] | undefined;
    for (const history of await unmanagedRequests(session)) {
      const sent = manage(history, budget);
      record(tally, previous, sent, budget);
      previous = sent;
    }
    return tally;
  };

/**
 * Drops the oldest unit while the messages do not fit: the oldest turn while there is more than one, then the
 * oldest round of the newest (an assistant message with the tool messages after it); the newest input stays.
 */
export function trimNewestFirst(messages: readonly ModelMessage[], budget: number): ModelMessage[] {
  let kept = [...messages];
  while (tokensOf(kept) > budget) {
    const nextUser = kept.findIndex((message, index) => index > 0 && message.role === 'user');
    if (nextUser > 0) {
      kept = kept.slice(nextUser);
      continue;
    }
    let end = 2;
    while (end < kept.length && kept[end]!.role === 'tool') end += 1;
    if (kept.length <= 1 || end >= kept.length) break;
    kept = [kept[0]!, ...kept.slice(end)];
  }
  return kept;
}

export const baselines: Record<string, Strategy> = {
  '`pruneMessages` + trim': managed((messages, budget) =>
    trimNewestFirst(
      pruneMessages({ messages, reasoning: 'before-last-message', toolCalls: 'before-last-2-messages' }),
      budget,
    ),
  ),
  'newest-first trim': managed(trimNewestFirst),
  'no management': managed((messages) => messages),
};
