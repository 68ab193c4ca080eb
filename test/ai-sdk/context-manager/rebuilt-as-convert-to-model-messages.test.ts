import { randomUUID } from 'node:crypto';
import { convertToModelMessages, jsonSchema, tool, type ToolSet, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { createAgentHistory } from '../../../src/index.js';
import { storeOf, stored, tokenCounter, user } from '../../context/fixtures.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { toolModelOutputs } from '../../../src/ai-sdk/context-manager/tool-model-outputs.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';

const inputSchema = jsonSchema<unknown>({ type: 'object' });
const tools: ToolSet = {
  deleteFile: tool({ inputSchema, needsApproval: true }),
  webSearch: tool({ inputSchema }),
  weather: tool({
    inputSchema,
    toModelOutput: async ({ toolCallId, output }) => ({ type: 'text', value: `${toolCallId}: ${String(output)}` }),
  }),
};

/** What a provider receives: the JSON of the messages, without the engine's own reference. */
const asSent = (messages: unknown) =>
  JSON.parse(JSON.stringify(messages, (key, value) => (key === 'agentHistoryRef' ? undefined : value)));

const weatherTurn = (id: string, output: string) =>
  ({
    id,
    role: 'assistant',
    parts: [
      { type: 'step-start' },
      { type: 'tool-weather', toolCallId: 'call_0', state: 'output-available', input: {}, output },
      { type: 'step-start' },
      { type: 'text', text: output, state: 'done' },
    ],
  }) as UIMessage;

const deniedDelete = {
  id: 'a1',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-deleteFile',
      toolCallId: 'call_0',
      state: 'approval-responded',
      input: { path: '/etc' },
      approval: { id: 'approval_0', approved: false, reason: 'too risky' },
    },
  ],
} as UIMessage;

const deniedProviderSearch = {
  id: 'a1',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-webSearch',
      toolCallId: 'call_0',
      state: 'approval-responded',
      input: { query: 'news' },
      providerExecuted: true,
      approval: { id: 'approval_0', approved: false },
    },
  ],
} as UIMessage;

describe.each(['memory', ...BACKENDS] as const)('createContextManager on the %s store', (backend) => {
  const database = backend === 'memory' ? undefined : useTestDatabase(backend);

  /** The context store of a thread holding `history`: in memory, or written through the real store. */
  async function storeHolding(history: UIMessage[]) {
    if (!database) return storeOf(history as never);
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({ userId: 'u1' });
    for (const message of history) await store.appendMessage(thread.id, message as never);
    return store.contextStore(thread.id);
  }

  /** What `initialMessages()` sends for `history`, and what `convertToModelMessages` sends. */
  async function bothSides(history: UIMessage[], options: { tools?: ToolSet } = { tools }) {
    const context = createContextManager({
      store: await storeHolding(history),
      model: 'gpt-4o',
      tokenCounter,
      ...options,
    });
    const engine = asSent(await context.initialMessages());
    const convert = context.lastReport?.stages.find((stage) => stage.stage === 'convert');
    return {
      engine,
      aiSdk: asSent(await convertToModelMessages(history, options)),
      counted: convert?.stage === 'convert' ? convert.countedSequences : undefined,
    };
  }

  describe('a denied approval followed by a user message', () => {
    it('should send an ordinary tool call execution-denied, as convertToModelMessages does', async () => {
      const { engine, aiSdk } = await bothSides([
        user('u0', 'Clean up') as UIMessage,
        deniedDelete,
        user('u1', 'OK') as UIMessage,
      ]);
      expect(engine).toStrictEqual(aiSdk);
      expect(engine[2]).toStrictEqual({
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: 'approval_0', approved: false, reason: 'too risky' },
          {
            type: 'tool-result',
            toolCallId: 'call_0',
            toolName: 'deleteFile',
            output: { type: 'execution-denied', reason: 'too risky' },
          },
        ],
      });
    });

    it('should send a provider-executed call execution-denied, as convertToModelMessages does', async () => {
      const { engine, aiSdk } = await bothSides([
        user('u0', 'Search') as UIMessage,
        deniedProviderSearch,
        user('u1', 'Never mind') as UIMessage,
      ]);
      expect(engine).toStrictEqual(aiSdk);
      expect(engine[2].content).toContainEqual({
        type: 'tool-result',
        toolCallId: 'call_0',
        toolName: 'webSearch',
        output: { type: 'execution-denied' },
      });
    });
  });

  it('should convert every output with toModelOutput when a call id repeats across turns', async () => {
    const { engine, aiSdk } = await bothSides([
      user('u0', 'Rome?') as UIMessage,
      weatherTurn('a0', 'Rome 18C'),
      user('u1', 'Paris?') as UIMessage,
      weatherTurn('a1', 'Paris 12C'),
      user('u2', 'Thanks') as UIMessage,
    ]);
    expect(engine).toStrictEqual(aiSdk);
    const results = engine.filter((message: { role: string }) => message.role === 'tool');
    expect(results.map((message: { content: [{ output: unknown }] }) => message.content[0].output)).toStrictEqual([
      { type: 'text', value: 'call_0: Rome 18C' },
      { type: 'text', value: 'call_0: Paris 12C' },
    ]);
  });

  describe('a tool part stored while its tool was missing', () => {
    const history = [
      user('u0', 'Search') as UIMessage,
      {
        id: 'a0',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          {
            type: 'dynamic-tool',
            toolName: 'webSearch',
            dynamic: false,
            toolCallId: 'call_0',
            state: 'output-available',
            input: { query: 'news' },
            output: 'three headlines',
          },
        ],
      } as UIMessage,
      user('u1', 'More') as UIMessage,
    ];
    const outputOf = (messages: Array<{ role: string; content: Array<{ output?: unknown }> }>) =>
      messages.find((message) => message.role === 'tool')?.content[0]?.output;

    it('should send its output once the tool is back in tools, as convertToModelMessages does', async () => {
      // No tool converts its output here, so stored counts are used where they are right.
      const { engine, aiSdk, counted } = await bothSides(history, {
        tools: { deleteFile: tools.deleteFile!, webSearch: tools.webSearch! },
      });
      expect(engine).toStrictEqual(aiSdk);
      expect(outputOf(engine)).toStrictEqual({ type: 'text', value: 'three headlines' });
      // Its stored count was made with the output omitted: the message is counted as it is sent.
      expect(counted).toStrictEqual([2]);
    });

    it('should omit its output while the tool is still missing, as convertToModelMessages does', async () => {
      const { engine, aiSdk, counted } = await bothSides(history, { tools: { deleteFile: tools.deleteFile! } });
      expect(engine).toStrictEqual(aiSdk);
      expect(counted).toStrictEqual([]);
      expect(outputOf(engine)).toStrictEqual({
        type: 'text',
        value: 'Tool output omitted because the tool is no longer available.',
      });
    });
  });
});

describe('toolModelOutputs', () => {
  it('should convert a preliminary output with toModelOutput, as convertToModelMessages does', async () => {
    const part = {
      type: 'tool-weather',
      toolCallId: 'call_0',
      state: 'output-available',
      input: {},
      output: 'Rome, so far 18C',
      preliminary: true,
    };
    const message = { id: 'a0', role: 'assistant', parts: [part] } as ContextUIMessage;
    const fromTools = toolModelOutputs(tools);
    await fromTools.convertLoaded({
      snapshot: null,
      latestSummary: null,
      pinned: [],
      tail: [stored(1, message)],
      currentVersion: 0,
    });
    const converted = fromTools.converter(undefined)?.({ toolName: 'weather', ...part });
    const [, toolMessage] = await convertToModelMessages([message as UIMessage], { tools });
    expect(converted).toStrictEqual({ type: 'text', value: 'call_0: Rome, so far 18C' });
    expect(toolMessage).toMatchObject({ content: [{ output: converted }] });
  });

  it('should tell apart calls of one id and one output by their input, which toModelOutput also reads', async () => {
    const byInput = toolModelOutputs({
      lookup: tool({
        inputSchema,
        toModelOutput: ({ input, output }) => ({
          type: 'text',
          value: `${JSON.stringify(input)} -> ${String(output)}`,
        }),
      }),
    });
    const part = (input: unknown) => ({
      type: 'tool-lookup',
      toolCallId: 'call_0',
      state: 'output-available',
      input,
      output: null,
    });
    const turns = [part({ id: 1 }), part({ id: 2 })].map(
      (call, index) => ({ id: `a${index}`, role: 'assistant', parts: [call] }) as ContextUIMessage,
    );
    await byInput.convertLoaded({
      snapshot: null,
      latestSummary: null,
      pinned: [],
      tail: turns.map((message, index) => stored(index + 1, message)),
      currentVersion: 0,
    });
    const convert = byInput.converter(undefined)!;
    expect(
      [{ id: 1 }, { id: 2 }].map((input) => convert({ toolName: 'lookup', toolCallId: 'call_0', input, output: null })),
    ).toStrictEqual([
      { type: 'text', value: '{"id":1} -> null' },
      { type: 'text', value: '{"id":2} -> null' },
    ]);
  });
});
