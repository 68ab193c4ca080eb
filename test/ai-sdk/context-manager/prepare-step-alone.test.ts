import { convertToModelMessages, generateText, isStepCount, tool, type ModelMessage, type UIMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { createOfflineSummarizer } from '../../../src/ai-sdk/summarizers/offline-summarizer.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { assistant, storeOf, text, tokenCounter, toolResult, user, words } from '../../context/fixtures.js';

/** Generated conversations per property; PROPERTY_RUNS raises it. */
const RUNS = Math.max(40, Math.ceil(Number(process.env.PROPERTY_RUNS ?? 800) / 8));

const snippets = [
  'Can you check the weather in Paris for tomorrow?',
  'Please summarize the report and list the open questions.',
  '你好，请帮我查一下明天北京的天气。',
  'Remember that my budget is 3,000 EUR and I prefer trains.',
  'OK.',
];
const bigForecast = Array.from({ length: 300 }, (_item, hour) => `hour ${hour}: 18C, light wind, no rain`).join('\n');
const turn = fc.record({
  user: fc.constantFrom(...snippets),
  pinned: fc.integer({ min: 0, max: 5 }).map((value) => value === 0),
  tool: fc.constantFrom('none', 'small', 'big'),
  answer: fc.integer({ min: 5, max: 120 }),
});
const conversation = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 12 }),
  question: fc.constantFrom(...snippets),
  contextWindow: fc.integer({ min: 1800, max: 9000 }),
  summarizer: fc.boolean(),
  toolSteps: fc.integer({ min: 0, max: 2 }),
  bigStepOutput: fc.boolean(),
});
type Conversation = typeof conversation extends fc.Arbitrary<infer VALUE> ? VALUE : never;

/** The thread's UI messages and which of them are pinned (at most two, never the newest question). */
function threadOf(value: Conversation): { messages: ContextUIMessage[]; pinned: Set<number> } {
  const messages: ContextUIMessage[] = [];
  const pinned = new Set<number>();
  value.turns.forEach((generated, index) => {
    if (generated.pinned && pinned.size < 2) pinned.add(messages.length);
    messages.push(user(`u${index}`, `${generated.user} (turn ${index})`));
    const parts = [];
    if (generated.tool !== 'none')
      parts.push(
        toolResult('weather', `stored-${index}`, { city: 'Rome' }, generated.tool === 'big' ? bigForecast : '18C'),
      );
    parts.push(text(`Answer ${index}: ${words(generated.answer, 'sunny')}`));
    messages.push(assistant(`a${index}`, ...parts));
  });
  messages.push(user('question', value.question));
  return { messages, pinned };
}

const weather = (output: string) =>
  tool({
    description: 'The forecast for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async () => output,
  });

/** A model that calls the weather tool `toolSteps` times, then answers. */
function modelFor(toolSteps: number) {
  let call = 0;
  const usage = {
    inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const index = call++;
      if (index < toolSteps)
        return {
          content: [{ type: 'tool-call', toolCallId: `step-${index}`, toolName: 'weather', input: '{"city":"Rome"}' }],
          finishReason: { unified: 'tool-calls', raw: 'tool_use' },
          usage,
          warnings: [],
        };
      return {
        content: [{ type: 'text', text: 'Done.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      };
    },
  });
}

type Copy = (messages: ModelMessage[], stepNumber: number) => ModelMessage[];
const copies: Copy = (messages, stepNumber) =>
  stepNumber % 2 === 0 ? structuredClone(messages) : (JSON.parse(JSON.stringify(messages)) as ModelMessage[]);

/**
 * One request: `initialMessages()` then the SDK's steps (`alone: false`), or `prepareStep` alone on the caller's
 * own conversion of the thread (`alone: true`); `copy` copies the messages the SDK passes at every step, as a
 * builder that wraps `prepareStep` does.
 */
async function run(value: Conversation, { alone, copy }: { alone: boolean; copy?: Copy }) {
  const thread = threadOf(value);
  const store = storeOf(thread.messages, (index) => ({ pinned: thread.pinned.has(index) }));
  const context = createContextManager({
    store,
    model: 'gpt-4o',
    modelProfile: { contextWindow: value.contextWindow, maxOutputTokens: 200 },
    maxOutputTokens: 200,
    instructions: 'You plan trips.',
    tools: { weather: weather('x') },
    summarizer: value.summarizer ? createOfflineSummarizer({ itemsPerSection: 3, itemCharacters: 40 }) : undefined,
    policy: { summary: { reserveTokens: 120 }, toolOutputPreview: { tokens: 120, minimumTokens: 64 } },
    tokenCounter,
    _internal: { now: () => 0 },
  });
  const model = modelFor(value.toolSteps);
  const messages = alone
    ? await convertToModelMessages(thread.messages as UIMessage[])
    : await context.initialMessages();
  await generateText({
    model,
    instructions: 'You plan trips.',
    tools: { weather: weather(value.bigStepOutput ? bigForecast : '19C') },
    messages,
    maxOutputTokens: 200,
    stopWhen: isStepCount(value.toolSteps + 1),
    prepareStep: (options) =>
      context.prepareStep(copy ? { ...options, messages: copy(options.messages, options.stepNumber) } : options),
  });
  const prompts = model.doGenerateCalls.map((call) => call.prompt);
  const withoutIds = <ROW extends { id: string }>(rows: readonly ROW[]) => rows.map(({ id: _id, ...rest }) => rest);
  return { prompts, summaries: withoutIds(store.summaries), snapshots: withoutIds(store.snapshots), thread };
}

const shrunkStepOutput: Conversation = {
  turns: [{ user: 'Can you check the weather in Paris for tomorrow?', pinned: true, tool: 'none', answer: 5 }],
  question: 'Can you check the weather in Paris for tomorrow?',
  contextWindow: 3882,
  summarizer: false,
  toolSteps: 2,
  bigStepOutput: true,
};

describe('createContextManager: prepareStep alone, on copies', () => {
  it('should send and store exactly what the initialMessages() path does, with pinned messages kept', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, async (value) => {
        const reference = await run(value, { alone: false });
        const copied = await run(value, { alone: false, copy: copies });
        const alone = await run(value, { alone: true, copy: copies });
        expect(copied.prompts).toEqual(reference.prompts);
        expect(alone.prompts).toEqual(reference.prompts);
        expect([copied.summaries, copied.snapshots]).toEqual([reference.summaries, reference.snapshots]);
        expect([alone.summaries, alone.snapshots]).toEqual([reference.summaries, reference.snapshots]);
        // The engine's references never reach the model, and every pinned message is in every prompt.
        const sent = JSON.stringify(alone.prompts);
        expect(sent).not.toContain('agentHistoryRef');
        for (const prompt of alone.prompts) {
          const promptText = JSON.stringify(prompt);
          for (const index of alone.thread.pinned) {
            const pinnedText = (alone.thread.messages[index]!.parts[0] as unknown as { text: string }).text;
            expect(promptText).toContain(JSON.stringify(pinnedText).slice(1, -1));
          }
        }
      }),
      {
        numRuns: RUNS,
        seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined,
        // Found by CI: a step's big tool output previewed at step 1 came back as a copy at step 2 and was previewed
        // again from the preview (the copy was not known as the engine's own message).
        examples: [[shrunkStepOutput]],
      },
    );
  }, 120_000);
});
