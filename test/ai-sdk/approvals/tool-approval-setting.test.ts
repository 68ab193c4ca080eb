import { ToolLoopAgent, convertToModelMessages, streamText, tool, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { streamChatTurn } from '../../../src/ai-sdk/index.js';
import type { TenantHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { userMessage } from '../../support/fixtures.js';
import { newThread, readAnswer, rowsOf, scriptedModel, textStep, usage } from '../fixtures.js';

type StreamPart = ReturnType<typeof textStep>[number];

/** A tool with no approval setting of its own: the agent's `toolApproval` decides. `executed` records its runs. */
function unguardedTools() {
  const executed: string[] = [];
  const deleteFile = tool({
    description: 'Delete a file',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => {
      executed.push(path);
      return { deleted: path };
    },
  });
  return { tools: { deleteFile }, executed };
}

const deleteStep = (path: string): StreamPart[] => [
  { type: 'tool-call', toolCallId: 'call-1', toolName: 'deleteFile', input: JSON.stringify({ path }) },
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
];

/** What a provider receives: the JSON of the messages, without the engine's own reference. */
const asSent = (messages: unknown) =>
  JSON.parse(JSON.stringify(messages, (key, value) => (key === 'agentHistoryRef' ? undefined : value)));

describe.each(BACKENDS)("ToolLoopAgent's toolApproval through the chat route on %s", (backend) => {
  const database = useTestDatabase(backend);

  /** One turn of a ToolLoopAgent with `toolApproval`, answering `steps`; returns the stored answer and the model. */
  async function agentTurn(
    history: TenantHistory,
    threadId: string,
    message: unknown,
    steps: StreamPart[][],
    setup: ReturnType<typeof unguardedTools>,
    toolApproval: ConstructorParameters<typeof ToolLoopAgent<never, typeof setup.tools>>[0]['toolApproval'],
    answerId = 'a-1',
  ) {
    const model = scriptedModel(steps);
    const turn = await streamChatTurn({
      history,
      threadId,
      message,
      tools: setup.tools,
      model: {
        agent: ({ prepareStep }) => new ToolLoopAgent({ model, tools: setup.tools, prepareStep, toolApproval }),
      },
      generateMessageId: () => answerId,
    });
    await readAnswer(turn.stream as ReadableStream<UIMessageChunk>);
    return { stored: await turn.done, model };
  }

  it('should store the request toolApproval asks for, and run the tool once when the user approves', async () => {
    const { history, threadId } = await newThread(database);
    const setup = unguardedTools();
    const askUser = { deleteFile: { type: 'user-approval' as const, reason: 'deletes data' } };
    const first = await agentTurn(
      history,
      threadId,
      userMessage('u-1', 'Clean up'),
      [deleteStep('/tmp/a')],
      setup,
      askUser,
    );
    expect(setup.executed).toEqual([]);
    const requested = first.stored.message.parts[1] as unknown as {
      state: string;
      approval: { id: string; requestReason?: string };
    };
    expect(requested).toMatchObject({ state: 'approval-requested', approval: { requestReason: 'deletes data' } });

    const approved = {
      ...first.stored.message,
      parts: first.stored.message.parts.map((part, index) =>
        index === 1
          ? { ...requested, state: 'approval-responded', approval: { ...requested.approval, approved: true } }
          : part,
      ),
    };
    const second = await agentTurn(history, threadId, approved, [textStep('Deleted.')], setup, askUser);
    expect(setup.executed).toEqual(['/tmp/a']);
    expect(second.model.doStreamCalls).toHaveLength(1);
    expect(second.model.doStreamCalls[0]!.prompt.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call-1', output: { type: 'json', value: { deleted: '/tmp/a' } } }],
    });
    expect(second.stored.message.parts[1]).toMatchObject({
      state: 'output-available',
      output: { deleted: '/tmp/a' },
      approval: { id: requested.approval.id, approved: true },
    });
  });

  it('should store an automatic denial, and send it in the next turn as convertToModelMessages does', async () => {
    const { history, threadId } = await newThread(database);
    const setup = unguardedTools();
    const deny = { deleteFile: { type: 'denied' as const, reason: 'read-only workspace' } };
    const first = await agentTurn(
      history,
      threadId,
      userMessage('u-1', 'Clean up'),
      [deleteStep('/tmp/a'), textStep('I may not delete files here.')],
      setup,
      deny,
    );
    expect(setup.executed).toEqual([]);
    expect(first.model.doStreamCalls).toHaveLength(2);
    const deniedPart = first.stored.message.parts.find((part) => part.type === 'tool-deleteFile');
    expect(deniedPart).toMatchObject({ approval: { approved: false, reason: 'read-only workspace' } });

    const second = await agentTurn(
      history,
      threadId,
      userMessage('u-2', 'Why?'),
      [textStep('Policy.')],
      setup,
      deny,
      'a-2',
    );
    // The same stored messages through convertToModelMessages and streamText: the provider gets the same prompt.
    const rows = await rowsOf(database, threadId);
    const stored = rows.map((row) => ({ id: row.message_id, role: row.role, parts: row.parts }) as UIMessage);
    const reference = scriptedModel([textStep('Policy.')]);
    const messages = await convertToModelMessages(stored.slice(0, 3), { tools: setup.tools });
    await streamText({ model: reference, tools: setup.tools, messages }).consumeStream();
    const sent = asSent(second.model.doStreamCalls[0]!.prompt);
    expect(sent).toStrictEqual(asSent(reference.doStreamCalls[0]!.prompt));
    expect(sent[2]).toMatchObject({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call-1', output: { type: 'error-text', value: 'read-only workspace' } },
      ],
    });
  });
});

describe.each(BACKENDS)('a provider-executed tool whose provider asks for approval, on %s', (backend) => {
  const database = useTestDatabase(backend);
  // Run by the provider (an MCP server, say): no execute here; the provider asks for approval in its stream.
  const tools = { webSearch: tool({ inputSchema: z.object({ query: z.string() }) }) };
  const searchStep: StreamPart[] = [
    {
      type: 'tool-call',
      toolCallId: 'ws-1',
      toolName: 'webSearch',
      input: JSON.stringify({ query: 'news' }),
      providerExecuted: true,
    },
    { type: 'tool-approval-request', approvalId: 'mcpr-1', toolCallId: 'ws-1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(20, 8) },
  ] as StreamPart[];
  const resultStep: StreamPart[] = [
    {
      type: 'tool-result',
      toolCallId: 'ws-1',
      toolName: 'webSearch',
      result: { headlines: ['one', 'two'] },
      providerExecuted: true,
    },
    ...textStep('Two headlines.'),
  ] as StreamPart[];

  async function agentTurn(history: TenantHistory, threadId: string, message: unknown, steps: StreamPart[][]) {
    const model = scriptedModel(steps);
    const turn = await streamChatTurn({
      history,
      threadId,
      message,
      tools,
      model: { agent: ({ prepareStep }) => new ToolLoopAgent({ model, tools, prepareStep }) },
      generateMessageId: () => 'a-1',
    });
    await readAnswer(turn.stream as ReadableStream<UIMessageChunk>);
    return { stored: await turn.done, model };
  }

  it('should store the request, send the approval to the provider as streamText would, and store its result', async () => {
    const { history, threadId } = await newThread(database);
    const first = await agentTurn(history, threadId, userMessage('u-1', 'Search the news'), [searchStep]);
    const requested = first.stored.message.parts.find((part) => part.type === 'tool-webSearch') as unknown as {
      state: string;
      providerExecuted?: boolean;
      approval: { id: string };
    };
    expect(requested).toMatchObject({
      state: 'approval-requested',
      providerExecuted: true,
      approval: { id: 'mcpr-1' },
    });

    const approved = {
      ...first.stored.message,
      parts: first.stored.message.parts.map((part) =>
        part === (requested as unknown)
          ? { ...requested, state: 'approval-responded', approval: { id: 'mcpr-1', approved: true } }
          : part,
      ),
    } as UIMessage;
    const second = await agentTurn(history, threadId, approved, [resultStep]);

    const reference = scriptedModel([resultStep]);
    const messages = await convertToModelMessages([userMessage('u-1', 'Search the news') as UIMessage, approved], {
      tools,
    });
    await streamText({ model: reference, tools, messages }).consumeStream();
    const sent = asSent(second.model.doStreamCalls[0]!.prompt);
    expect(sent).toStrictEqual(asSent(reference.doStreamCalls[0]!.prompt));
    expect(JSON.stringify(sent)).toContain('"type":"tool-approval-response"');
    expect(second.stored.message.parts.find((part) => part.type === 'tool-webSearch')).toMatchObject({
      state: 'output-available',
      providerExecuted: true,
      output: { headlines: ['one', 'two'] },
    });
  });
});
