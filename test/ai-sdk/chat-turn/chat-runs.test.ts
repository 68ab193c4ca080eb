import { streamText, ToolLoopAgent } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../../src/ai-sdk/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { eventually, newThread, post, scriptedModel, textStep } from '../fixtures.js';

describe.each(BACKENDS)('the runs of the chat route on %s', (backend) => {
  const database = useTestDatabase(backend);

  const runsOf = (threadId: string) =>
    database.admin.query<{ status: string; provider: string | null; model: string | null; finish_reason: string }>(
      'select status, provider, model, finish_reason from agent_run where thread_id = $1',
      [threadId],
    );

  it.each([
    ['passes prepareStep on', true, { provider: 'mock-provider', model: 'mock-model-id' }],
    ['ignores prepareStep', false, { provider: 'mock-provider', model: 'mock-model-id' }],
  ])(
    'should record the model and the finish reason on the run when the source %s',
    async (_, passPrepareStep, recorded) => {
      const { history, threadId } = await newThread(database);
      const handler = createChatHandler({
        getHistory: () => history,
        model: {
          streamText: ({ messages, abortSignal, prepareStep }) =>
            streamText({
              model: scriptedModel([textStep('Hello.')]),
              messages,
              abortSignal,
              ...(passPrepareStep ? { prepareStep } : {}),
            }),
        },
      });
      const response = await handler.POST(
        post({ threadId, message: { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }),
      );
      await response.text();
      await eventually(async () =>
        expect(await runsOf(threadId)).toEqual([{ status: 'completed', ...recorded, finish_reason: 'stop' }]),
      );
    },
  );

  it('should record the provider and model of an agent built without prepareStep', async () => {
    const { history, threadId } = await newThread(database);
    const handler = createChatHandler({
      getHistory: () => history,
      model: { agent: new ToolLoopAgent({ model: scriptedModel([textStep('Hello.')]) }) },
    });
    const response = await handler.POST(
      post({ threadId, message: { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }),
    );
    await response.text();
    await eventually(async () =>
      expect(await runsOf(threadId)).toEqual([
        { status: 'completed', provider: 'mock-provider', model: 'mock-model-id', finish_reason: 'stop' },
      ]),
    );
  });
});
