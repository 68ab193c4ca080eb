import { ToolLoopAgent, isStepCount, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createContextManager, createUpdateWorkingMemoryTool } from '../../../src/ai-sdk/index.js';
import { createMemoryContextStore, createSharedMemory, type SharedMemory } from '../../../src/testing/index.js';
import { assistant, text, tokenCounter, user } from '../../context/fixtures.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const step = (content: object[], unified: 'stop' | 'tool-calls' = 'stop') => ({
  content,
  finishReason: { unified, raw: unified },
  usage,
  warnings: [],
});
const preference = 'I cycle a lot. Please give distances in kilometres, never in miles.';

/** One request of a thread: the context manager's messages, then a ToolLoopAgent on a mock model; its prompts. */
async function request(shared: SharedMemory, threadId: string, userId: string, question: string, steps: object[]) {
  const store = threadStores.get(threadId) ?? createMemoryContextStore({ memory: { shared, threadId, userId } });
  threadStores.set(threadId, store);
  store.appendMessage({ message: user(`${threadId}-${store.messages.length + 1}`, question) });
  const tools = { updateWorkingMemory: createUpdateWorkingMemoryTool({ store: store as never }) };
  const context = createContextManager({
    store,
    model: 'gpt-4o',
    tokenCounter,
    tools,
    instructions: 'You plan rides.',
    policy: { memory: { workingMemory: 'include', recall: { mode: 'auto' } } },
  });
  const model = new MockLanguageModelV4({ doGenerate: steps as never });
  const agent = new ToolLoopAgent({
    model,
    tools,
    instructions: 'You plan rides.',
    stopWhen: isStepCount(4),
    prepareStep: context.prepareStep,
  });
  const result = await agent.generate({ messages: await context.initialMessages() });
  store.appendMessage({ message: assistant(`${threadId}-${store.messages.length + 1}`, text(result.text)) });
  return model.doGenerateCalls.map((call) => JSON.stringify(call.prompt as ModelMessage[]));
}
const threadStores = new Map<string, ReturnType<typeof createMemoryContextStore>>();

describe('memory across threads through createContextManager', () => {
  it("should bring a preference stated in one thread to the model in the user's next thread, and never to another user's", async () => {
    const shared = createSharedMemory();
    await request(shared, 't1', 'alice', preference, [
      step(
        [
          {
            type: 'tool-call',
            toolCallId: 'c1',
            toolName: 'updateWorkingMemory',
            input: JSON.stringify({ expectedVersion: 0, content: '- Distances: kilometres' }),
          },
        ],
        'tool-calls',
      ),
      step([{ type: 'text', text: 'Kilometres it is.' }]),
    ]);
    const question = 'How many kilometres is the ride around the lake, or should I count in miles?';
    const [second] = await request(shared, 't2', 'alice', question, [step([{ type: 'text', text: '40 km.' }])]);
    // The working memory the model wrote, and the message recalled from the first thread.
    expect(second).toContain('(version 1). To change it, pass expectedVersion 1.]\\n\\n- Distances: kilometres');
    expect(second).toContain(
      `[Recalled from an earlier conversation with this user. The user wrote:]\\n\\n${preference}`,
    );
    expect(second!.indexOf('Distances')).toBeLessThan(second!.indexOf(question));
    // Another user of the same tenant, and the same user in another tenant, see none of it.
    const [bob] = await request(shared, 't3', 'bob', question, [step([{ type: 'text', text: 'Which unit?' }])]);
    const [otherTenant] = await request(createSharedMemory(), 't4', 'alice', question, [
      step([{ type: 'text', text: 'Which unit?' }]),
    ]);
    for (const prompt of [bob!, otherTenant!]) {
      expect(prompt).not.toContain('Distances');
      expect(prompt).not.toContain('never in miles');
    }
  });
});
