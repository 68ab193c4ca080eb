import { ToolLoopAgent, streamText, tool, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ChatConflictError,
  createChatHandler,
  createContextManager,
  streamChatTurn,
} from '../../../src/ai-sdk/index.js';
import { InvalidMessageError } from '../../../src/errors/index.js';
import type { TenantHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { userMessage } from '../../support/fixtures.js';
import {
  eventually,
  gatedStream,
  newThread,
  post,
  readAnswer,
  rowsOf,
  runsOf,
  scriptedModel,
  textStep,
  usage,
} from '../fixtures.js';

type StreamPart = ReturnType<typeof textStep>[number];

/** A tool that must be approved; `executed` records every run of it. */
function approvalTools() {
  const executed: string[] = [];
  const deleteFile = tool({
    description: 'Delete a file',
    inputSchema: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }) => {
      executed.push(path);
      return { deleted: path };
    },
  });
  return { tools: { deleteFile }, executed };
}

/** One step calling deleteFile for each path (parallel calls `call-1`, `call-2`, …). */
const deleteStep = (...paths: string[]): StreamPart[] => [
  ...paths.map((path, index) => ({
    type: 'tool-call' as const,
    toolCallId: `call-${index + 1}`,
    toolName: 'deleteFile',
    input: JSON.stringify({ path }),
  })),
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
];

/** The client's copy of `message` after `addToolApprovalResponse` for `toolCallId` (as useChat makes it). */
function respond(message: UIMessage, toolCallId: string, approved: boolean, reason?: string): UIMessage {
  const parts = message.parts.map((part) => {
    const record = part as Record<string, unknown> & { approval?: { id: string } };
    if (record.toolCallId !== toolCallId || record.state !== 'approval-requested') return part;
    return { ...record, state: 'approval-responded', approval: { ...record.approval!, approved, reason } };
  });
  return { ...message, parts } as UIMessage;
}

describe.each(BACKENDS)('tool approvals on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** A thread whose newest answer `a-1` asks to approve deleteFile for each of `paths`. */
  async function pendingApproval(...paths: string[]) {
    const { history, threadId } = await newThread(database);
    const setup = approvalTools();
    const first = await turn(history, threadId, setup.tools, [deleteStep(...paths)], userMessage('u-1', 'Clean up'));
    await readAnswer(first.turn.stream as ReadableStream<UIMessageChunk>);
    const stored = await first.turn.done;
    return { history, threadId, ...setup, answer: stored.message as UIMessage };
  }

  async function turn(
    history: TenantHistory,
    threadId: string,
    tools: ReturnType<typeof approvalTools>['tools'],
    steps: Parameters<typeof scriptedModel>[0],
    message: unknown,
    answerId = 'a-1',
  ) {
    const model = scriptedModel(steps);
    const started = await streamChatTurn({
      history,
      threadId,
      message,
      tools,
      model: { streamText: ({ messages, abortSignal }) => streamText({ model, tools, messages, abortSignal }) },
      generateMessageId: () => answerId,
    });
    return { turn: started, model };
  }

  const partsOf = async (threadId: string) =>
    (await rowsOf(database, threadId)).map((row) => [row.message_id, row.status, row.parts]);

  it('should store the approval request as the answer (completed) with the tool not run', async () => {
    const { threadId, executed, answer } = await pendingApproval('/tmp/a');
    expect(executed).toEqual([]);
    expect(answer.parts[1]).toMatchObject({
      type: 'tool-deleteFile',
      toolCallId: 'call-1',
      state: 'approval-requested',
      input: { path: '/tmp/a' },
      approval: { id: expect.any(String) },
    });
    expect((await rowsOf(database, threadId)).map((row) => [row.message_id, row.status])).toEqual([
      ['u-1', 'completed'],
      ['a-1', 'completed'],
    ]);
  });

  it('should run the approved tool once, send the model its result and store request, response and result on the same message', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const { turn: continued, model } = await turn(
      history,
      threadId,
      tools,
      [textStep('Deleted.')],
      respond(answer, 'call-1', true),
    );
    expect(continued.assistantMessageId).toBe('a-1');
    await readAnswer(continued.stream as ReadableStream<UIMessageChunk>);
    const stored = await continued.done;

    expect(executed).toEqual(['/tmp/a']);
    const approvalId = (answer.parts[1] as { approval: { id: string } }).approval.id;
    expect(model.doStreamCalls[0]!.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Clean up' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'deleteFile', input: { path: '/tmp/a' } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call-1',
            toolName: 'deleteFile',
            output: { type: 'json', value: { deleted: '/tmp/a' } },
          },
        ],
      },
    ]);
    const expectedParts = [
      { type: 'step-start' },
      {
        type: 'tool-deleteFile',
        toolCallId: 'call-1',
        state: 'output-available',
        input: { path: '/tmp/a' },
        output: { deleted: '/tmp/a' },
        approval: { id: approvalId, approved: true },
      },
      { type: 'step-start' },
      { type: 'text', text: 'Deleted.', state: 'done' },
    ];
    expect(stored.message.parts).toEqual(expectedParts);
    expect(stored.status).toBe('completed');
    expect(await partsOf(threadId)).toEqual([
      ['u-1', 'completed', [{ type: 'text', text: 'Clean up' }]],
      ['a-1', 'completed', expectedParts],
    ]);
    const runs = await runsOf(database, threadId);
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed']);
    expect((await rowsOf(database, threadId))[1]!.run_id).toBe(continued.runId);
  });

  it('should record a denial without running the tool and tell the model it was denied', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const denied = respond(answer, 'call-1', false, 'not that one');
    const { turn: continued, model } = await turn(history, threadId, tools, [textStep('Kept it.')], denied);
    await readAnswer(continued.stream as ReadableStream<UIMessageChunk>);
    await continued.done;

    expect(executed).toEqual([]);
    expect(model.doStreamCalls[0]!.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call-1',
          toolName: 'deleteFile',
          output: { type: 'execution-denied', reason: 'not that one' },
        },
      ],
    });
    const [, [, status, parts]] = (await partsOf(threadId)) as [unknown, [string, string, unknown[]]];
    expect(status).toBe('completed');
    expect(parts[1]).toMatchObject({ state: 'output-denied', approval: { approved: false, reason: 'not that one' } });
    expect(parts).toHaveLength(4);
  });

  it('should answer a retried continuation 409 answer-exists, neither running the tool again nor duplicating parts', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const approved = respond(answer, 'call-1', true);
    const first = await turn(history, threadId, tools, [textStep('Deleted.')], approved);
    await readAnswer(first.turn.stream as ReadableStream<UIMessageChunk>);
    await first.turn.done;
    const before = await partsOf(threadId);

    const retry = turn(history, threadId, tools, [textStep('Again.')], approved);
    await expect(retry).rejects.toThrow(ChatConflictError);
    await expect(retry).rejects.toMatchObject({ reason: 'answer-exists', messageId: 'a-1' });
    expect(executed).toEqual(['/tmp/a']);
    expect(await partsOf(threadId)).toEqual(before);
    expect(await runsOf(database, threadId)).toHaveLength(2);
  });

  it('should let exactly one of four concurrent continuations win; the others are 409 and the tool runs once', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const approved = respond(answer, 'call-1', true);
    const gated = gatedStream(textStep('Deleted.').slice(0, 2), textStep('Deleted.').slice(2));
    const results = await Promise.allSettled([
      turn(history, threadId, tools, [gated.stream], approved),
      ...[1, 2, 3].map(() => turn(history, threadId, tools, [gated.stream], approved)),
    ]);
    const won = results.filter((result) => result.status === 'fulfilled');
    const lost = results.filter((result) => result.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(3);
    for (const { reason } of lost as PromiseRejectedResult[]) {
      expect(reason).toBeInstanceOf(ChatConflictError);
      expect(reason.reason).toMatch(/^(answer-in-progress|answer-exists)$/);
    }
    gated.release();
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof turn>>>).value;
    await readAnswer(winner.turn.stream as ReadableStream<UIMessageChunk>);
    expect((await winner.turn.done).status).toBe('completed');
    expect(executed).toEqual(['/tmp/a']);
    const [, [, , parts]] = (await partsOf(threadId)) as [unknown, [string, string, unknown[]]];
    expect(parts).toHaveLength(4);
    // The first turn's run and the winner's completed; a loser that got past the first write has a cancelled run.
    const runs = (await runsOf(database, threadId)).map((run) => run.status);
    expect(runs.filter((status) => status === 'completed')).toHaveLength(2);
    expect(runs.filter((status) => status !== 'completed' && status !== 'cancelled')).toEqual([]);
  });

  it('should continue (once, of four racing retries) an answer whose responses were stored by a request that ended before its model started', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const approved = respond(answer, 'call-1', true);
    // What a request that died between storing the response and starting its run leaves behind.
    const { updated } = await history.reopenAssistantMessage(threadId, 'a-1', {
      expectedParts: answer.parts as never,
      parts: approved.parts as never,
    });
    expect(updated).toBe(true);
    // Four retries at once: each may pass planning and the (now no-op) first write; one claims the message.
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map(() => turn(history, threadId, tools, [textStep('Deleted.')], approved)),
    );
    const won = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    expect(won).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ChatConflictError);
    await readAnswer(won[0]!.turn.stream as ReadableStream<UIMessageChunk>);
    expect((await won[0]!.turn.done).message.parts).toHaveLength(4);
    expect(executed).toEqual(['/tmp/a']);
    await expect(turn(history, threadId, tools, [textStep('x')], approved)).rejects.toMatchObject({
      reason: 'answer-exists',
    });
    expect(executed).toEqual(['/tmp/a']);
  });

  it('should continue the same answer through a second approval asked by the continuation', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const first = await turn(history, threadId, tools, [deleteStep('/tmp/b')], respond(answer, 'call-1', true));
    await readAnswer(first.turn.stream as ReadableStream<UIMessageChunk>);
    const asked = (await first.turn.done).message as UIMessage;
    expect(asked.parts.map((part) => (part as { state?: string }).state)).toEqual([
      undefined,
      'output-available',
      undefined,
      'approval-requested',
    ]);
    // Both steps use the call id `call-1` (some providers reuse ids across steps): the approval id tells them apart.
    const second = {
      ...asked,
      parts: asked.parts.map((part, index) =>
        index === 3 ? respond({ ...asked, parts: [part] }, 'call-1', true).parts[0]! : part,
      ),
    };
    const last = await turn(history, threadId, tools, [textStep('Both deleted.')], second);
    await readAnswer(last.turn.stream as ReadableStream<UIMessageChunk>);
    const stored = await last.turn.done;
    expect(executed).toEqual(['/tmp/a', '/tmp/b']);
    expect(stored.message.id).toBe('a-1');
    expect(stored.message.parts.map((part) => (part as { state?: string }).state)).toEqual([
      undefined,
      'output-available',
      undefined,
      'output-available',
      undefined,
      'done',
    ]);
    expect((await rowsOf(database, threadId)).map((row) => row.message_id)).toEqual(['u-1', 'a-1']);
  });

  it('should continue the answer of a ToolLoopAgent the same way', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const model = scriptedModel([textStep('Deleted.')]);
    const continued = await streamChatTurn({
      history,
      threadId,
      message: respond(answer, 'call-1', true),
      tools,
      model: { agent: ({ prepareStep }) => new ToolLoopAgent({ model, tools, prepareStep }) },
    });
    await readAnswer(continued.stream as ReadableStream<UIMessageChunk>);
    const stored = await continued.done;
    expect(executed).toEqual(['/tmp/a']);
    expect(stored.message.id).toBe('a-1');
    expect(stored.message.parts.map((part) => (part as { state?: string }).state)).toEqual([
      undefined,
      'output-available',
      undefined,
      'done',
    ]);
    expect(model.doStreamCalls).toHaveLength(1);
    expect(model.doStreamCalls[0]!.prompt.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call-1', output: { type: 'json', value: { deleted: '/tmp/a' } } }],
    });
  });

  it('should refuse a forged approval (an id never requested) with 400 and write nothing', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const before = await partsOf(threadId);
    const forged = respond(answer, 'call-1', true) as UIMessage;
    (forged.parts[1] as { approval: { id: string } }).approval.id = 'approval-forged';
    const attempt = turn(history, threadId, tools, [textStep('x')], forged);
    await expect(attempt).rejects.toThrow(InvalidMessageError);
    await expect(attempt).rejects.toMatchObject({ path: 'message.parts[1].approval.id' });
    expect(executed).toEqual([]);
    expect(await partsOf(threadId)).toEqual(before);
    expect(await runsOf(database, threadId)).toHaveLength(1);
  });

  it.each([
    ['the tool input', (part: Record<string, unknown>) => ({ ...part, input: { path: '/etc/passwd' } })],
    [
      'a forged result',
      (part: Record<string, unknown>) => ({ ...part, state: 'output-available', output: { deleted: 'x' } }),
    ],
  ])('should refuse an approval that changes %s with 400 and write nothing', async (_, change) => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const before = await partsOf(threadId);
    const responded = respond(answer, 'call-1', true);
    const tampered = {
      ...responded,
      parts: responded.parts.map((part, index) => (index === 1 ? change(part as never) : part)),
    };
    await expect(turn(history, threadId, tools, [textStep('x')], tampered)).rejects.toThrow(InvalidMessageError);
    expect(executed).toEqual([]);
    expect(await partsOf(threadId)).toEqual(before);
  });

  it('should refuse an approval for a tool call of an older message with 409 approval-not-pending', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const next = await turn(history, threadId, tools, [textStep('Fine.')], userMessage('u-2', 'Never mind'), 'a-2');
    await readAnswer(next.turn.stream as ReadableStream<UIMessageChunk>);
    await next.turn.done;
    const model = scriptedModel([textStep('x')]);
    const attempt = streamChatTurn({
      history,
      threadId,
      message: respond(answer, 'call-1', true),
      tools,
      model: { streamText: ({ messages, abortSignal }) => streamText({ model, tools, messages, abortSignal }) },
    });
    await expect(attempt).rejects.toMatchObject({ reason: 'approval-not-pending', messageId: 'a-1' });
    expect(executed).toEqual([]);
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it('should store two parallel approvals answered one by one, and continue once both are answered', async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a', '/tmp/b');
    const firstAnswer = respond(answer, 'call-1', true);
    const first = await turn(history, threadId, tools, [textStep('too early')], firstAnswer);
    const read = await readAnswer(first.turn.stream as ReadableStream<UIMessageChunk>);
    expect(read.chunks).toEqual(['start', 'finish']);
    expect(first.turn.runId).toBe('');
    expect(first.model.doStreamCalls).toHaveLength(0);
    expect(executed).toEqual([]);
    const [, [, status, parts]] = (await partsOf(threadId)) as [unknown, [string, string, Array<{ state: string }>]];
    expect([status, parts.map((part) => part.state)]).toEqual([
      'completed',
      [undefined, 'approval-responded', 'approval-requested'],
    ]);

    const both = respond(firstAnswer, 'call-2', false);
    const second = await turn(history, threadId, tools, [textStep('Deleted a, kept b.')], both);
    await readAnswer(second.turn.stream as ReadableStream<UIMessageChunk>);
    await second.turn.done;
    expect(executed).toEqual(['/tmp/a']);
    expect(second.model.doStreamCalls[0]!.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call-2', toolName: 'deleteFile', output: { type: 'execution-denied' } },
        {
          type: 'tool-result',
          toolCallId: 'call-1',
          toolName: 'deleteFile',
          output: { type: 'json', value: { deleted: '/tmp/a' } },
        },
      ],
    });
    const rows = await rowsOf(database, threadId);
    expect((rows[1]!.parts as Array<{ state?: string }>).map((part) => part.state)).toEqual([
      undefined,
      'output-available',
      'output-denied',
      undefined,
      'done',
    ]);
  });

  it("should take useChat's own re-submit through createChatHandler (messages, trigger, messageId), with the context engine", async () => {
    const { history, threadId, tools, executed, answer } = await pendingApproval('/tmp/a');
    const model = scriptedModel([textStep('Deleted.')]);
    const chat = createChatHandler({
      getHistory: () => history,
      tools,
      model: {
        streamText: ({ messages, abortSignal, prepareStep }) =>
          streamText({ model, tools, messages, abortSignal, prepareStep }),
      },
      contextManager: ({ history: store, threadId: thread }) =>
        createContextManager({ store: store.contextStore(thread), model: 'gpt-4o', tools }),
    });
    const approved = respond(answer, 'call-1', true);
    const body = {
      id: threadId,
      trigger: 'submit-message',
      messageId: 'a-1',
      messages: [userMessage('u-1', 'Clean up'), approved],
    };
    const response = await chat.POST(post(body));
    expect(response.status).toBe(200);
    await response.text();
    await eventually(async () => expect((await rowsOf(database, threadId))[1]!.status).toBe('completed'));
    expect(executed).toEqual(['/tmp/a']);
    expect(model.doStreamCalls[0]!.prompt.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call-1', output: { type: 'json', value: { deleted: '/tmp/a' } } }],
    });

    const retry = await chat.POST(post(body));
    expect(retry.status).toBe(409);
    expect(await retry.json()).toMatchObject({ error: { code: 'chat-answer-exists', messageId: 'a-1' } });
    const forged = await chat.POST(
      post({ ...body, messages: [respond({ ...answer, id: 'a-unknown' }, 'call-1', true)], messageId: undefined }),
    );
    expect(forged.status).toBe(404);
    expect(executed).toEqual(['/tmp/a']);
  });
});
