// `maxInputTokens` is the budget stated directly: what the model is sent (instructions and messages, counted
// independently of the engine) never exceeds it, and most of it is used.
import { generateText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import type { ContextManagerModel } from '../../../src/ai-sdk/context-manager/resolve-manager-profile.js';
import { resolveModelProfile } from '../../../src/context/index.js';
import { InvalidArgumentError } from '../../../src/errors/index.js';
import { countSentTokens } from '../../support/count-sent-tokens.js';
import { assistant, storeOf, text, tokenCounter, user, words } from '../../context/fixtures.js';

const answer = {
  content: [{ type: 'text' as const, text: 'Done.' }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage: {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  },
  warnings: [],
};
const instructions = 'You are a careful assistant. Answer briefly.';
const prices = resolveModelProfile({ modelId: 'gpt-4o' });

const thread = (turns: number, size: number) =>
  storeOf([
    ...Array.from({ length: turns }, (_unused, index) => [
      user(`u${index}`, `Question ${index}: ${words(size, 'why')}`),
      assistant(`a${index}`, text(`Answer ${index}: ${words(size * 2, 'because')}`)),
    ]).flat(),
    user('newest', 'And now?'),
  ]);

/** One call through `generateText` with the manager; what the model was sent, counted independently. */
async function sentTokens(model: ContextManagerModel, turns: number, size: number, maxInputTokens: number) {
  const context = createContextManager({
    store: thread(turns, size),
    model,
    instructions,
    maxInputTokens,
    tokenCounter,
  });
  const mock = new MockLanguageModelV4({ doGenerate: [answer] });
  await generateText({
    model: mock,
    instructions,
    messages: await context.initialMessages(),
    prepareStep: context.prepareStep,
  });
  const prompt = mock.doGenerateCalls[0]!.prompt;
  expect(prompt.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'And now?' }] });
  return { sent: countSentTokens(prompt, prices), messages: prompt.length };
}

describe('maxInputTokens', () => {
  it('should cap what gpt-4o is sent at 1,000 tokens on a 60-turn thread, and use most of it', async () => {
    const { sent, messages } = await sentTokens('gpt-4o', 60, 40, 1000);
    expect(sent).toBeLessThanOrEqual(1000);
    expect(sent).toBeGreaterThanOrEqual(500); // the default targetRatio (0.6) trims below the budget
    expect(messages).toBeLessThan(60);
  });

  it('should cap what is sent for any budget and thread (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 300, max: 6000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 120 }),
        fc.constantFrom<ContextManagerModel>(
          'gpt-4o',
          { provider: 'openai.chat', modelId: 'gpt-4o-2024-08-06' },
          {
            provider: 'azure.chat',
            modelId: 'prod-east-deployment',
          },
        ),
        async (maxInputTokens, turns, size, model) => {
          const { sent } = await sentTokens(model, turns, size, maxInputTokens);
          expect(sent).toBeLessThanOrEqual(maxInputTokens);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('should leave the window in charge when the window leaves less', async () => {
    const context = createContextManager({
      store: thread(2, 5),
      model: 'gpt-4o',
      modelProfile: { contextWindow: 2000 },
      maxOutputTokens: 500,
      maxInputTokens: 100_000,
      tokenCounter,
    });
    await context.initialMessages();
    const budget = context.lastReport!.budget;
    expect(budget.availableTokens + budget.currentInputTokens).toBe(2000 - 500 - 60);
  });

  it('should refuse a budget that is not a positive integer with InvalidArgumentError', () => {
    for (const maxInputTokens of [0, -5, 1.5, Number.NaN]) {
      expect(() =>
        createContextManager({ store: thread(1, 1), model: 'gpt-4o', maxInputTokens, tokenCounter }),
      ).toThrowError(InvalidArgumentError);
    }
    expect(() =>
      createContextManager({ store: thread(1, 1), model: 'gpt-4o', maxInputTokens: 0, tokenCounter }),
    ).toThrowError('Invalid maxInputTokens 0: expected a positive integer: the most tokens a model call may be sent.');
  });
});
