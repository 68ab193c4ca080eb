import { generateText, isStepCount, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createContextManager, createUpdateWorkingMemoryTool } from '../../../src/ai-sdk/index.js';
import { InvalidArgumentError } from '../../../src/errors/index.js';
import { createMemoryContextStore, createSharedMemory } from '../../../src/testing/index.js';
import { tokenCounter, user } from '../../context/fixtures.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const callTool = (input: object, id = 'call-1') => ({
  content: [
    { type: 'tool-call' as const, toolCallId: id, toolName: 'updateWorkingMemory', input: JSON.stringify(input) },
  ],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
  usage,
  warnings: [],
});
const answer = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
});

type MemoryTool = ReturnType<typeof createUpdateWorkingMemoryTool>;

function aliceThread(threadId = 't1', shared = createSharedMemory()) {
  const store = createMemoryContextStore({ memory: { shared, threadId, userId: 'alice' } });
  store.appendMessage({ message: user(`${threadId}-u1`, 'Please use metric units from now on.') });
  return { store, shared };
}

const toolOutputOf = (prompt: ModelMessage[]) =>
  prompt.flatMap((message) =>
    message.role === 'tool' && typeof message.content !== 'string'
      ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part.output] : []))
      : [],
  );

async function run(
  store: ReturnType<typeof aliceThread>['store'],
  steps: object[],
  tool: MemoryTool = createUpdateWorkingMemoryTool({ store: store as never }),
) {
  const model = new MockLanguageModelV4({ doGenerate: steps as never });
  const context = createContextManager({
    store,
    model: 'gpt-4o',
    tokenCounter,
    tools: { updateWorkingMemory: tool },
    policy: { memory: { workingMemory: 'include' } },
  });
  await generateText({
    model,
    tools: { updateWorkingMemory: tool },
    messages: await context.initialMessages(),
    prepareStep: context.prepareStep,
    stopWhen: isStepCount(4),
  });
  return model.doGenerateCalls.map((call) => call.prompt as ModelMessage[]);
}

describe('createUpdateWorkingMemoryTool', () => {
  it("should save the model's Markdown, and show it in the next model call", async () => {
    const { store } = aliceThread();
    const prompts = await run(store, [callTool({ expectedVersion: 0, content: '- Units: metric' }), answer('Noted.')]);
    expect(toolOutputOf(prompts[1]!)).toEqual([{ type: 'json', value: { version: 1 } }]);
    expect(await store.getWorkingMemory!()).toEqual({
      id: 'working-memory-1',
      scope: 'user',
      content: '- Units: metric',
      version: 1,
    });
    store.appendMessage({ message: user('t1-u2', 'And for the ride tomorrow?') });
    const next = await run(store, [answer('40 km.')]);
    expect(JSON.stringify(next[0]![0])).toContain(
      '[Working memory about the user, kept across conversations (version 1). To change it, pass expectedVersion 1.]\\n\\n- Units: metric',
    );
  });

  it('should write nothing for a stale version, and tell the model the current document so it can retry', async () => {
    const { store, shared } = aliceThread();
    // A second writer (the same user in another thread) got there first.
    const other = createMemoryContextStore({ memory: { shared, threadId: 't2', userId: 'alice' } });
    await other.updateWorkingMemory!({ content: '- Lives in Lyon', expectedVersion: 0 });
    const prompts = await run(store, [
      callTool({ expectedVersion: 0, content: '- Units: metric' }),
      callTool({ expectedVersion: 1, content: '- Lives in Lyon\n- Units: metric' }, 'call-2'),
      answer('Noted.'),
    ]);
    expect(toolOutputOf(prompts[1]!)).toEqual([
      {
        type: 'error-text',
        value:
          'WorkingMemoryConflictError: The working memory changed: you passed expectedVersion 0, but it is now version 1. Nothing was written. Merge your change into the current content below and call updateWorkingMemory again with expectedVersion 1.\n\nCurrent content (version 1):\n- Lives in Lyon',
      },
    ]);
    expect(toolOutputOf(prompts[2]!).at(-1)).toEqual({ type: 'json', value: { version: 2 } });
    expect((await store.getWorkingMemory!())?.content).toBe('- Lives in Lyon\n- Units: metric');
  });

  it('should let only one of two writers with the same version win', async () => {
    const { store } = aliceThread();
    const tool = createUpdateWorkingMemoryTool({ store: store as never });
    const write = (content: string) =>
      tool.execute!(
        { expectedVersion: 0, content },
        { toolCallId: content, messages: [], context: undefined },
      ) as Promise<unknown>;
    const results = await Promise.allSettled([write('first'), write('second')]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await store.getWorkingMemory!())?.version).toBe(1);
  });

  it('should store a document that matches the schema as JSON, and refuse one that does not or is too long', async () => {
    const { store } = aliceThread();
    const schema = z.object({ units: z.enum(['metric', 'imperial']), city: z.string().optional() });
    const tool = createUpdateWorkingMemoryTool({ store: store as never, schema, maxCharacters: 60 });
    const prompts = await run(
      store,
      [
        callTool({ expectedVersion: 0, document: { units: 'furlongs' } }),
        callTool({ expectedVersion: 0, document: { units: 'metric', city: 'x'.repeat(100) } }, 'call-2'),
        callTool({ expectedVersion: 0, document: { units: 'metric', city: 'Lyon' } }, 'call-3'),
        answer('Noted.'),
      ],
      tool as unknown as MemoryTool,
    );
    const outputs = toolOutputOf(prompts[3]!);
    expect(outputs[0]).toMatchObject({
      type: 'error-text',
      value: expect.stringContaining("does not match the working memory's schema"),
    });
    expect(outputs[1]).toMatchObject({
      type: 'error-text',
      value: expect.stringContaining('expected at most 60 characters of JSON (it has 128)'),
    });
    expect(outputs[2]).toEqual({ type: 'json', value: { version: 1 } });
    expect((await store.getWorkingMemory!())?.content).toBe('{"units":"metric","city":"Lyon"}');
  });

  it('should refuse a huge Markdown document and a bad version, writing nothing', async () => {
    const { store } = aliceThread();
    const prompts = await run(store, [
      callTool({ expectedVersion: 0, content: 'x'.repeat(16_001) }),
      callTool({ expectedVersion: -1, content: 'ok' }, 'call-2'),
      answer('Sorry.'),
    ]);
    expect(toolOutputOf(prompts[2]!).map((output) => output.type)).toEqual(['error-text', 'error-text']);
    expect(JSON.stringify(toolOutputOf(prompts[2]!))).toContain('expected at most 16000 characters (it has 16001)');
    expect(await store.getWorkingMemory!()).toBeNull();
    expect(() => createUpdateWorkingMemoryTool({ store: store as never, maxCharacters: 0 })).toThrow(
      new InvalidArgumentError({ argument: 'maxCharacters', value: 0, message: 'expected an integer of at least 1.' }),
    );
  });
});
