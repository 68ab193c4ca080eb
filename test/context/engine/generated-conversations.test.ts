// The context engine's rules (never over budget, tool calls and approvals in pairs, the newest input and pinned
// messages kept, no invented results, snapshots that rebuild, memory from outside the thread first, whole, in order and
// dropped before any turn; test/support/check-generated-context.ts) over generated
// agent conversations (test/support/agent-conversations.ts, the generator bench/context-fit.ts runs 100,000 times):
// at CI size, a few hundred conversations of up to 200 messages.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateConversation, type NewestTurn } from '../../support/agent-conversations.js';
import { runGeneratedConversation, type ConversationRun } from '../../support/check-generated-context.js';
import { defaultContextPolicy, type ContextPolicyInput } from '../../../src/context/index.js';
import { isMemoryMessage } from '../../support/generated-memory.js';
import { tokenCounter } from '../fixtures.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const timeout = 120_000 + RUNS * 400;
const seed = fc.integer({ min: 1, max: 2 ** 31 - 1 });
/** Seeds 1…n, fixed: the utilisation figures are over the same conversations every run. */
const UTILISATION_CONVERSATIONS = Number(process.env.UTILISATION_CONVERSATIONS ?? 200);

async function run(value: number): Promise<ConversationRun> {
  return runGeneratedConversation(generateConversation(value, { maxMessages: 200 }), tokenCounter);
}

async function forEveryCall(check: (call: ConversationRun['calls'][number], run: ConversationRun) => void) {
  await fc.assert(
    fc.asyncProperty(seed, async (value) => {
      const result = await run(value);
      for (const call of result.calls) check(call, result);
    }),
    { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
  );
}

describe('generated agent conversations (every part type, approvals, huge payloads, budgets of 2k-200k)', () => {
  it(
    'should never send more than the budget, by an independent count, and never count less than that',
    async () => {
      await forEveryCall((call) => {
        expect(call.overBudgetTokens).toBe(0);
        expect(call.engineTokens).toBeGreaterThanOrEqual(call.sentTokens);
      });
    },
    timeout,
  );

  it(
    'should never split a call from its result or an approval request from its response',
    async () => {
      await forEveryCall((call) => expect(call.splitPairs).toEqual([]));
    },
    timeout,
  );

  it(
    'should keep the newest user input and every pinned message, and invent no result',
    async () => {
      await forEveryCall((call) => {
        expect(call.firstRole).toBeNull();
        expect(call.lostNewest).toBe(false);
        expect(call.lostPinned).toEqual([]);
        expect(call.invented).toEqual([]);
      });
    },
    timeout,
  );

  it(
    'should put memory first, each item whole and in its order, and drop it lowest-ranked first',
    async () => {
      await forEveryCall((call) => expect(call.memoryProblems).toEqual([]));
    },
    timeout,
  );

  it(
    'should drop memory before any history: the other messages are those of the same call without memory',
    async () => {
      let compared = 0;
      let dropped = 0;
      await fc.assert(
        fc.asyncProperty(seed, async (value) => {
          const conversation = generateConversation(value, { maxMessages: 200 });
          const result = await runGeneratedConversation(
            conversation,
            tokenCounter,
            {},
            {
              compareWithoutMemory: true,
            },
          );
          for (const call of result.calls) {
            expect(call.overBudgetTokens).toBe(0);
            expect(call.memoryProblems).toEqual([]);
            if (call.memoryDisplacedHistory === null) continue;
            compared += 1;
            expect(call.memoryDisplacedHistory).toBe(false);
          }
          if (conversation.memory && result.calls[0]?.memoryProblems.length === 0) {
            const loaded = (conversation.memory.workingMemory ? 1 : 0) + conversation.memory.recalled.length;
            if (result.calls[0].sent.filter((message) => isMemoryMessage(message)).length < loaded) dropped += 1;
          }
        }),
        {
          numRuns: Math.ceil(RUNS / 3),
          seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined,
        },
      );
      // The property met calls with memory, and memory that did not fit.
      expect(compared).toBeGreaterThan(0);
      expect(dropped).toBeGreaterThan(0);
    },
    timeout,
  );

  it(
    'should write snapshots that rebuild exactly what was sent',
    async () => {
      await forEveryCall((call) => expect(call.snapshotExact).not.toBe(false));
    },
    timeout,
  );

  it(
    'should refuse with a typed error only when what may never be cut exceeds the budget',
    async () => {
      await fc.assert(
        fc.asyncProperty(seed, async (value) => {
          const result = await run(value);
          if (!result.refused) return;
          expect(result.refused.name).toBe('ContextBudgetExceededError');
          expect(result.refused.requiredTokens).toBeGreaterThan(result.refused.messageBudgetTokens);
        }),
        { numRuns: RUNS },
      );
    },
    timeout,
  );

  const cases: Array<{ name: string; newestTurn?: NewestTurn; pinnedAnswer?: boolean; policy?: ContextPolicyInput }> = [
    {
      // Cut to the low-water mark, fixed previews, tool traffic in chunks, old reasoning kept while it fits.
      name: 'the policy is the default one, made for prompt caching',
      policy: {
        summary: { targetRatio: defaultContextPolicy.summary.targetRatio },
        toolOutputPreview: { sizing: 'fixed' },
      },
    },
    {
      name: 'a low-water mark of 50 % meets an in-progress newest turn',
      newestTurn: 'in-progress',
      policy: { summary: { targetRatio: 0.5 }, toolOutputPreview: { sizing: 'fixed' } },
    },
    { name: 'the newest turn is in-progress, its first call often older than the budget', newestTurn: 'in-progress' },
    { name: 'the newest turn is awaiting-approval, its first call often older', newestTurn: 'awaiting-approval' },
    { name: "the oldest turn's answer is pinned (sent without its question)", pinnedAnswer: true },
  ];
  for (const { name, newestTurn, pinnedAnswer, policy } of cases)
    it(
      `should keep every rule when ${name}`,
      async () => {
        await fc.assert(
          fc.asyncProperty(seed, async (value) => {
            const conversation = generateConversation(value, {
              maxMessages: 200,
              newestTurn,
              pinnedAnswer,
              budget: [2000, 40_000],
            });
            const result = await runGeneratedConversation(conversation, tokenCounter, policy);
            if (result.refused)
              expect(result.refused.requiredTokens).toBeGreaterThan(result.refused.messageBudgetTokens);
            for (const call of result.calls) {
              expect(call.overBudgetTokens).toBe(0);
              expect([call.splitPairs, call.lostPinned, call.invented]).toEqual([[], [], []]);
              expect(call.lostNewest).toBe(false);
              expect(call.firstRole).toBeNull();
              expect(call.snapshotExact).not.toBe(false);
              expect(call.memoryProblems).toEqual([]);
            }
          }),
          {
            numRuns: Math.ceil(RUNS / 4),
            seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined,
          },
        );
      },
      timeout,
    );

  it(
    'should use the budget with targetRatio 1: median at least 95 %, worst tenth at least 85 % of the calls over it',
    async () => {
      // Every call whose history exceeded the budget before any stage ran: pruning that removes more than the
      // budget needs shows here, not only a cut by selection or trim.
      const uses: number[] = [];
      for (let value = 1; value <= UTILISATION_CONVERSATIONS; value++)
        for (const call of (await run(value)).calls)
          if (call.unmanagedTokens > call.budget) uses.push(call.sentTokens / call.budget);
      uses.sort((a, b) => a - b);
      const at = (share: number) => uses[Math.max(0, Math.ceil(share * uses.length) - 1)]!;
      expect(uses.length).toBeGreaterThan(UTILISATION_CONVERSATIONS / 4);
      expect(at(0.5)).toBeGreaterThanOrEqual(0.95);
      expect(at(0.1)).toBeGreaterThanOrEqual(0.85);
    },
    timeout,
  );
});
