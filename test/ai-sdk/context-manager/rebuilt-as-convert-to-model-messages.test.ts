import { randomUUID } from 'node:crypto';
import { convertToModelMessages, jsonSchema, tool, type ToolSet, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { createAgentHistory } from '../../../src/index.js';
import { storeOf, tokenCounter, user } from '../../context/fixtures.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';

const inputSchema = jsonSchema<unknown>({ type: 'object' });
const tools: ToolSet = {
  deleteFile: tool({ inputSchema, needsApproval: true }),
  webSearch: tool({ inputSchema }),
};

/** What a provider receives: the JSON of the messages, without the engine's own reference. */
const asSent = (messages: unknown) =>
  JSON.parse(JSON.stringify(messages, (key, value) => (key === 'agentHistoryRef' ? undefined : value)));

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
    return {
      engine: asSent(await context.initialMessages()),
      aiSdk: asSent(await convertToModelMessages(history, options)),
    };
  }

  describe('a denied approval followed by a user message', () => {
    it('should send an ordinary tool call execution-denied, as convertToModelMessages does', async () => {
      const { engine, aiSdk } = await bothSides([user('u0', 'Clean up') as UIMessage, deniedDelete, user('u1', 'OK')]);
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
        user('u1', 'Never mind'),
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
});
