import { isStepCount, streamText, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../../src/ai-sdk/index.js';
import { createMemoryContextStore, createSharedMemory } from '../../../src/testing/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { newThread, post, schemas, textStep, usage, type ChatMessage } from '../fixtures.js';

const memoryCallStep = (content: string, expectedVersion: number) => [
  {
    type: 'tool-call',
    toolCallId: `call-${expectedVersion}`,
    toolName: 'updateWorkingMemory',
    input: JSON.stringify({ expectedVersion, content }),
  },
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
];

describe.each(BACKENDS)('createChatHandler with workingMemory on %s', (backend) => {
  const database = useTestDatabase(backend);

  it("should build the updateWorkingMemory tool on the turn's working memory and hand it to the model source", async () => {
    const { history, threadId } = await newThread(database);
    const shared = createSharedMemory();
    const alice = createMemoryContextStore({ memory: { shared, threadId: 'elsewhere', userId: 'alice' } });
    const asked: Array<{ threadId: string }> = [];
    const model = new MockLanguageModelV4({
      doStream: [memoryCallStep('- Units: metric', 0), textStep('Noted.')].map((chunks) => ({
        stream: new ReadableStream({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(chunk);
            controller.close();
          },
        }),
      })) as never,
    });
    const handler = createChatHandler<ChatMessage>({
      getHistory: () => history,
      ...schemas,
      workingMemory: {
        store: (input) => {
          asked.push({ threadId: input.threadId });
          return alice as never;
        },
      },
      model: {
        streamText: ({ messages, abortSignal, memoryTools }) =>
          streamText({ model, messages, abortSignal, tools: { ...memoryTools }, stopWhen: isStepCount(3) }),
      },
    });
    const response = await handler.POST(
      post({ threadId, message: { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Use metric, please.' }] } }),
    );
    expect(response.status).toBe(200);
    await response.text();
    expect(asked).toEqual([{ threadId }]);
    expect(await alice.getWorkingMemory!()).toMatchObject({ content: '- Units: metric', version: 1 });
    const second = model.doStreamCalls[1]!.prompt as ModelMessage[];
    expect(second.at(-1)).toMatchObject({
      role: 'tool',
      content: [
        { type: 'tool-result', toolName: 'updateWorkingMemory', output: { type: 'json', value: { version: 1 } } },
      ],
    });
  });
});
