// Tool call ids are the provider's, and some providers number them per response (`call_0`, `call_1`, … in every
// answer). Generated chats whose every answer reuses the same ids, replayed call by call as a chat route does (the
// user message stored, the request built, each step's messages appended, the answer stored): every request keeps
// each call with its result and stays within the budget, and every snapshot rebuilds exactly what was sent.
import type { ModelMessage, UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { countSentTokens } from '../../support/count-sent-tokens.js';
import { createMemoryContextStore } from '../../../src/testing/index.js';
import { chatSession, type Session } from '../../../bench/prompt-cache/sessions.js';
import { fixedTokens, profile, toolPairProblems } from '../../support/check-generated-context.js';
import { tokenCounter } from '../fixtures.js';
import { appendCounted, engineFor, rebuildsFrom } from '../../support/carried-cut-threads.js';

/** The session with every answer's calls numbered from `call_0` again. */
function withReusedIds(session: Session): Session {
  return JSON.parse(JSON.stringify(session).replace(/"t\d+-c(\d+)"/g, '"call_$1"')) as Session;
}

async function replay(session: Session, budget: number, summarize: boolean) {
  const store = createMemoryContextStore();
  const problems: string[] = [];
  let requests = 0;
  const check = (where: string, messages: readonly ModelMessage[]) => {
    requests += 1;
    for (const problem of toolPairProblems(messages)) problems.push(`${where}: ${problem}`);
    const tokens = countSentTokens(messages as never, profile) + fixedTokens;
    if (tokens > budget) problems.push(`${where}: ${tokens} tokens over the budget of ${budget}`);
  };
  for (const [index, turn] of session.turns.entries()) {
    appendCounted(store, turn.user, tokenCounter);
    const { engine } = engineFor(store, { budget, summarize });
    let messages = (await engine.buildInitialContext()).messages;
    check(`turn ${index}`, messages);
    for (const [step, added] of turn.steps.entries()) {
      const input = [...messages, ...added];
      messages = (await engine.prepareStep({ messages: input, stepNumber: step + 1 })).messages ?? input;
      check(`turn ${index} step ${step + 1}`, messages);
    }
    if (turn.answer) appendCounted(store, turn.answer as UIMessage, tokenCounter);
  }
  return { problems, requests, store };
}

describe('tool call ids reused in every answer', () => {
  // Before previews named the stored message they were made in, 19 of these 48 replays wrote a snapshot that did
  // not rebuild: a preview made of one `call_1` was made of every `call_1` in the rebuild.
  const cases = [1, 2, 3, 4, 5, 6, 7, 8].flatMap((seed) =>
    [6_000, 16_000, 40_000].flatMap((budget) => [true, false].map((summarize) => ({ seed, budget, summarize }))),
  );
  it.each(cases)(
    'should keep every call with its result and rebuild every snapshot (seed $seed, budget $budget, summarizer $summarize)',
    async ({ seed, budget, summarize }) => {
      const session = withReusedIds(await chatSession(seed, 40));
      // The generator reuses ids now: the same id answers in many turns.
      expect((JSON.stringify(session).match(/"call_0"/g) ?? []).length).toBeGreaterThan(20);
      const { problems, requests, store } = await replay(session, budget, summarize);
      expect(requests).toBeGreaterThan(40);
      expect(problems).toEqual([]);
      // The chat outgrew the budget: snapshots were written, and each rebuilds what its request sent.
      expect(store.snapshots.length).toBeGreaterThan(0);
      expect(rebuildsFrom(store, 0)).not.toContain(false);
    },
  );
});
