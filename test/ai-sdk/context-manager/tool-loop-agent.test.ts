import { ToolLoopAgent, generateText, isStepCount, simulateReadableStream, streamText, tool } from 'ai';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { createOfflineSummarizer } from '../../../src/ai-sdk/summarizers/offline-summarizer.js';
import type { ChatContextManager } from '../../../src/ai-sdk/shared/chat-model-source.js';
import { toolOutputPreviewMarker } from '../../../src/context/stages/preview-tool-output.js';
import type { ContextReport } from '../../../src/context/index.js';
import { assistant, storeOf, text, tokenCounter, user, words } from '../../context/fixtures.js';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const forecast = Array.from(
  { length: 400 },
  (_item, hour) => `hour ${hour}: 18C, light wind from the north-west, no rain`,
).join('\n');
const weather = tool({
  description: 'Get the hourly forecast for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async () => forecast,
});
const tripThread = Array.from({ length: 10 }, (_unused, index) => [
  user(`u${index + 1}`, `Plan day ${index + 1} in Rome.`),
  assistant(
    `a${index + 1}`,
    text(`Day ${index + 1}: the Forum, then lunch in Monti, then the museum number ${index + 1}. ${words(80, 'walk')}`),
  ),
]).flat();
const storedThread = () => storeOf([...tripThread, user('u7', 'Will it rain on day 11?')]);

function managerFor(store: ReturnType<typeof storeOf>, reports: ContextReport[]) {
  return createContextManager({
    store,
    model: 'gpt-4o',
    modelProfile: { contextWindow: 1200, maxOutputTokens: 100 },
    maxOutputTokens: 100,
    tools: { weather },
    instructions: 'You plan trips.',
    summarizer: createOfflineSummarizer({ itemsPerSection: 3, itemCharacters: 40 }),
    policy: { summary: { reserveTokens: 80 }, toolOutputPreview: { tokens: 120, minimumTokens: 64 } },
    tokenCounter,
    onReport: (report) => reports.push(report),
    _internal: { now: () => 0 },
  });
}

const toolCallStep = {
  content: [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Rome"}' }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
  usage: usage(800, 20),
  warnings: [],
};
const answerStep = {
  content: [{ type: 'text' as const, text: 'No rain on day 11.' }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage: usage(820, 8),
  warnings: [],
};
const streamOf = (
  step: typeof toolCallStep | typeof answerStep,
): { stream: ReadableStream<LanguageModelV4StreamPart> } => ({
  stream: simulateReadableStream<LanguageModelV4StreamPart>({
    chunks: [
      ...step.content.flatMap((part): LanguageModelV4StreamPart[] =>
        part.type === 'tool-call'
          ? [part]
          : [
              { type: 'text-start', id: 't1' },
              { type: 'text-delta', id: 't1', delta: part.text },
              { type: 'text-end', id: 't1' },
            ],
      ),
      { type: 'finish', finishReason: step.finishReason, usage: step.usage },
    ],
  }),
});

function expectPrompts(prompts: unknown[], reports: ContextReport[]) {
  const [first, second] = prompts as Array<Array<{ role: string; content: unknown }>>;
  // Step 0: instructions, the summary as a user message, the newest turns, the question. Never a second system message.
  expect(first!.filter((message) => message.role === 'system')).toEqual([
    { role: 'system', content: 'You plan trips.' },
  ]);
  expect(first![1]).toEqual({
    role: 'user',
    content: [
      {
        type: 'text',
        text: expect.stringMatching(
          /^\[Summary of the earlier conversation, messages 1 to \d+\. It replaces those messages\.\]\n\n## Goals\n- Plan day \d in Rome\./,
        ),
      },
    ],
  });
  expect(first!.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Will it rain on day 11?' }] });
  // Step 1: the same context, then the call and its result shortened to a marked preview.
  expect(second!.slice(0, first!.length)).toEqual(first);
  expect(second!.slice(first!.length)).toEqual([
    {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'call-1',
          toolName: 'weather',
          input: { city: 'Rome' },
          providerExecuted: undefined,
          providerOptions: undefined,
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call-1',
          toolName: 'weather',
          output: { type: 'text', value: expect.stringContaining(`${toolOutputPreviewMarker} the first`) },
          providerOptions: undefined,
        },
      ],
    },
  ]);
  const preview = (second!.at(-1)!.content as Array<{ output: { value: string } }>)[0]!.output.value;
  expect(preview).toContain(
    `of ${tokenCounter.count(forecast)} tokens are shown; the full output is in the conversation log.]\nhour 0: 18C`,
  );
  expect(reports.map((report) => [report.trigger, report.stepNumber, report.changed])).toEqual([
    // One report per step: step 0 sends what initialMessages() built, so it does not repeat that report.
    ['initial-messages', null, true],
    ['prepare-step', 1, true],
  ]);
  expect(reports[1]!.calibration.observedInputTokens).toBe(800);
  expect(reports.every((report) => report.budget.remainingTokens >= 0)).toBe(true);
}

/** The agent both runs use: the trip planner with the weather tool and the context manager's `prepareStep`. */
function tripPlanner(model: MockLanguageModelV4, context: ReturnType<typeof managerFor>) {
  return new ToolLoopAgent({
    model,
    instructions: 'You plan trips.',
    tools: { weather },
    maxOutputTokens: 100,
    stopWhen: isStepCount(5),
    prepareStep: context.prepareStep,
  });
}

async function runGenerate() {
  const reports: ContextReport[] = [];
  const context = managerFor(storedThread(), reports);
  const model = new MockLanguageModelV4({ doGenerate: [toolCallStep, answerStep] });
  const agent = tripPlanner(model, context);
  const result = await agent.generate({ messages: await context.initialMessages() });
  return { reports, text: result.text, prompts: model.doGenerateCalls.map((call) => call.prompt) };
}

async function runStream() {
  const reports: ContextReport[] = [];
  const context = managerFor(storedThread(), reports);
  const model = new MockLanguageModelV4({ doStream: [streamOf(toolCallStep), streamOf(answerStep)] });
  const agent = tripPlanner(model, context);
  const result = await agent.stream({ messages: await context.initialMessages() });
  const parts: string[] = [];
  for await (const part of result.stream) parts.push(part.type);
  return { reports, parts, text: await result.text, prompts: model.doStreamCalls.map((call) => call.prompt) };
}

describe('createContextManager with ToolLoopAgent', () => {
  it('should send the compacted context at step 0 and a previewed tool result at step 1 (agent.generate)', async () => {
    const { reports, text: answer, prompts } = await runGenerate();
    expect(answer).toBe('No rain on day 11.');
    expect(prompts).toHaveLength(2);
    expectPrompts(prompts, reports);
    expect(prompts[0]).toMatchInlineSnapshot(`
      [
        {
          "content": "You plan trips.",
          "role": "system",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "[Summary of the earlier conversation, messages 1 to 12. It replaces those messages.]

      ## Goals
      - Plan day 5 in Rome.
      - Plan day 6 in Rome.

      ## Decisions
      - Day 5: the Forum, then lunch in Monti, …
      - Day 6: the Forum, then lunch in Monti, …

      ## Facts
      - None.

      ## Completed actions
      - None.

      ## Open tasks
      - None.",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "user",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Plan day 7 in Rome.",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "user",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Day 7: the Forum, then lunch in Monti, then the museum number 7. walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "assistant",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Plan day 8 in Rome.",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "user",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Day 8: the Forum, then lunch in Monti, then the museum number 8. walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "assistant",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Plan day 9 in Rome.",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "user",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Day 9: the Forum, then lunch in Monti, then the museum number 9. walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "assistant",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Plan day 10 in Rome.",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "user",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Day 10: the Forum, then lunch in Monti, then the museum number 10. walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk walk",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "assistant",
        },
        {
          "content": [
            {
              "providerOptions": undefined,
              "text": "Will it rain on day 11?",
              "type": "text",
            },
          ],
          "providerOptions": undefined,
          "role": "user",
        },
      ]
    `);
    expect(prompts[1]!.slice(prompts[0]!.length)).toMatchInlineSnapshot(`
      [
        {
          "content": [
            {
              "input": {
                "city": "Rome",
              },
              "providerExecuted": undefined,
              "providerOptions": undefined,
              "toolCallId": "call-1",
              "toolName": "weather",
              "type": "tool-call",
            },
          ],
          "providerOptions": undefined,
          "role": "assistant",
        },
        {
          "content": [
            {
              "output": {
                "type": "text",
                "value": "[agent-history: tool output shortened to fit the context window; the first 85 of 7199 tokens are shown; the full output is in the conversation log.]
      hour 0: 18C, light wind from the north-west, no rain
      hour 1: 18C, light wind from the north-west, no rain
      hour 2: 18C, light wind from the north-west, no rain
      hour 3: 18C, light wind from the north-west, no rain
      hour 4: 18C, light wind from the ",
              },
              "providerOptions": undefined,
              "toolCallId": "call-1",
              "toolName": "weather",
              "type": "tool-result",
            },
          ],
          "providerOptions": undefined,
          "role": "tool",
        },
      ]
    `);
  });

  it('should send exactly the same prompts when streaming (await agent.stream)', async () => {
    const streamed = await runStream();
    expect(streamed.parts).not.toContain('error');
    expect(streamed.text).toBe('No rain on day 11.');
    expectPrompts(streamed.prompts, streamed.reports);
    expect(streamed.prompts).toEqual((await runGenerate()).prompts);
  });

  it('should type-check as prepareStep of generateText, streamText, a tool-less agent and a chat handler', () => {
    const context = managerFor(storedThread(), []);
    const model = new MockLanguageModelV4({});
    void (() => generateText({ model, tools: { weather }, prompt: 'x', prepareStep: context.prepareStep }));
    void (() => streamText({ model, tools: { weather }, prompt: 'x', prepareStep: context.prepareStep }));
    void new ToolLoopAgent({ model, prepareStep: context.prepareStep });
    const asChatManager: ChatContextManager<{ weather: typeof weather }> = context;
    expect(typeof asChatManager.prepareStep).toBe('function');
  });

  it('should return undefined from prepareStep for its own initial messages', async () => {
    const context = managerFor(storedThread(), []);
    const messages = await context.initialMessages();
    const model = new MockLanguageModelV4({});
    const result = await context.prepareStep<{ weather: typeof weather }>({
      messages,
      steps: [],
      stepNumber: 0,
      model,
      instructions: 'You plan trips.',
      initialInstructions: 'You plan trips.',
      initialMessages: messages,
      responseMessages: [],
      runtimeContext: {},
      toolsContext: {} as never,
    });
    expect(result).toBeUndefined();
  });
});
