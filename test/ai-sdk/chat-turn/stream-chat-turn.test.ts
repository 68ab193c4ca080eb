import { ToolLoopAgent, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { streamChatTurn, stopChat } from '../../../src/ai-sdk/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import {
  gatedStream,
  newThread,
  readAnswer,
  rowsOf,
  runsOf,
  schemas,
  scriptedModel,
  scriptedSource,
  textStep,
  tools,
  weatherCallStep,
  type ChatMessage,
} from '../fixtures.js';
import { userMessage } from '../../support/fixtures.js';

describe.each(BACKENDS)('streamChatTurn on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should persist a full two-step agent turn: the user row, the assistant row completed, usage on the run and in metadata', async () => {
    const { history, threadId } = await newThread(database);
    const model = scriptedModel([weatherCallStep('Rome'), textStep('Rome is 18C today.', [70, 5])]);
    const agent = new ToolLoopAgent({ model, tools });
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Weather in Rome?'),
      model: { agent },
      ...schemas,
      generateMessageId: () => 'a-1',
    });
    const { message, chunks } = await readAnswer(turn.stream as ReadableStream<UIMessageChunk>);
    const stored = await turn.done;

    expect(chunks.filter((type) => type === 'start-step')).toHaveLength(2);
    expect(message).toEqual({
      id: 'a-1',
      role: 'assistant',
      metadata: { usage: { inputTokens: 90, outputTokens: 13, totalTokens: 103 } },
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-weather',
          toolCallId: 'call-1',
          state: 'output-available',
          input: { city: 'Rome' },
          output: { city: 'Rome', tempC: 18 },
        },
        { type: 'step-start' },
        { type: 'text', text: 'Rome is 18C today.', state: 'done' },
      ],
    });
    expect(stored.status).toBe('completed');
    expect(stored.message).toEqual(message);

    const rows = await rowsOf(database, threadId);
    expect(rows.map((row) => [row.message_id, row.role, row.status])).toEqual([
      ['u-1', 'user', 'completed'],
      ['a-1', 'assistant', 'completed'],
    ]);
    expect(rows[1]!.metadata).toEqual({ usage: { inputTokens: 90, outputTokens: 13, totalTokens: 103 } });
    const runs = await runsOf(database, threadId);
    expect(runs).toEqual([{ id: turn.runId, status: 'completed', input_tokens: 90, output_tokens: 13, error: null }]);
    expect(rows[1]!.run_id).toBe(turn.runId);
    // The model saw the stored user message, converted.
    expect(model.doStreamCalls[0]!.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Rome?' }] },
    ]);
  });

  it('should checkpoint each finished step: while step 2 streams, the row holds the parts of step 1', async () => {
    const { history, threadId } = await newThread(database);
    const second = gatedStream(textStep('Paris is ').slice(0, 2), textStep('Paris is 18C.').slice(1));
    const model = scriptedModel([weatherCallStep('Paris'), second.stream]);
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Weather in Paris?'),
      model: { agent: new ToolLoopAgent({ model, tools }) },
      ...schemas,
    });
    const reader = turn.stream.getReader();
    for (let chunk = await reader.read(); !(chunk.value?.type === 'text-delta'); chunk = await reader.read()) {
      if (chunk.done) throw new Error('the stream ended before step 2');
    }
    const [, assistant] = await rowsOf(database, threadId);
    expect(assistant!.status).toBe('streaming');
    expect(assistant!.parts).toEqual([
      { type: 'step-start' },
      {
        type: 'tool-weather',
        toolCallId: 'call-1',
        state: 'output-available',
        input: { city: 'Paris' },
        output: { city: 'Paris', tempC: 18 },
      },
    ]);
    second.release();
    while (!(await reader.read()).done);
    expect((await turn.done).status).toBe('completed');
  });

  it('should keep the partial answer as cancelled when the turn is aborted mid-stream', async () => {
    const { history, threadId } = await newThread(database);
    const abort = new AbortController();
    const gated = gatedStream(textStep('The weather is ').slice(0, 3), textStep('never sent.').slice(1));
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Weather?'),
      model: scriptedSource([gated.stream]),
      ...schemas,
      abortSignal: abort.signal,
    });
    const reader = turn.stream.getReader();
    for (
      let chunk = await reader.read();
      chunk.value?.type !== 'text-delta' || chunk.value.delta !== 'weather ';
      chunk = await reader.read()
    );
    abort.abort();
    const stored = await turn.done;
    expect(stored.status).toBe('cancelled');
    expect(stored.message.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'The weather ', state: 'done' },
    ]);
    expect((await runsOf(database, threadId)).map((run) => run.status)).toEqual(['cancelled']);
  });

  it("should cancel and keep the partial answer when the client's reader is cancelled with onDisconnect 'cancel'", async () => {
    const { history, threadId } = await newThread(database);
    const gated = gatedStream(textStep('Partial answer here').slice(0, 3), textStep('never.').slice(1));
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Hi'),
      model: scriptedSource([gated.stream]),
      onDisconnect: 'cancel',
    });
    const reader = turn.stream.getReader();
    for (
      let chunk = await reader.read();
      chunk.value?.type !== 'text-delta' || chunk.value.delta !== 'answer ';
      chunk = await reader.read()
    );
    await reader.cancel();
    const stored = await turn.done;
    expect(stored.status).toBe('cancelled');
    expect(stored.message.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Partial answer ', state: 'done' },
    ]);
  });

  it("should finish and store the whole answer when the client disconnects (onDisconnect 'continue', the default)", async () => {
    const { history, threadId } = await newThread(database);
    const gated = gatedStream(textStep('All of it, stored.').slice(0, 2), textStep('All of it, stored.').slice(2));
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Hi'),
      model: scriptedSource([gated.stream]),
    });
    const reader = turn.stream.getReader();
    for (let chunk = await reader.read(); chunk.value?.type !== 'text-delta'; chunk = await reader.read());
    await reader.cancel();
    gated.release();
    const stored = await turn.done;
    expect(stored.status).toBe('completed');
    expect(stored.message.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'All of it, stored.', state: 'done' },
    ]);
  });

  it('should stop the streaming answer with stopChat and return it cancelled, with the partial parts', async () => {
    const { history, threadId } = await newThread(database);
    const gated = gatedStream(textStep('Stopped right here').slice(0, 3), textStep('never.').slice(1));
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Hi'),
      model: scriptedSource([gated.stream]),
    });
    const reader = turn.stream.getReader();
    for (
      let chunk = await reader.read();
      chunk.value?.type !== 'text-delta' || chunk.value.delta !== 'right ';
      chunk = await reader.read()
    );
    const stopped = await stopChat({ history, threadId });
    expect(stopped?.status).toBe('cancelled');
    expect(stopped?.message.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Stopped right ', state: 'done' },
    ]);
    expect(await stopChat({ history, threadId })).toBeNull();
  });

  it('should stop an answer streaming in another process from its last checkpoint, settling unfinished tool calls', async () => {
    const { history, threadId } = await newThread(database);
    await history.appendMessage(threadId, userMessage('u-1', 'Weather?'));
    const run = await history.startRun(threadId);
    await history.beginAssistantMessage(threadId, { messageId: 'a-elsewhere', runId: run.id });
    await history.checkpointMessage(threadId, 'a-elsewhere', {
      parts: [
        { type: 'step-start' },
        { type: 'text', text: 'Let me check', state: 'streaming' },
        { type: 'tool-weather', toolCallId: 'call-1', state: 'input-available', input: { city: 'Rome' } },
      ],
    });
    const stopped = await stopChat({ history, threadId });
    expect(stopped?.status).toBe('cancelled');
    expect(stopped?.message.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Let me check', state: 'done' },
      {
        type: 'tool-weather',
        toolCallId: 'call-1',
        state: 'output-error',
        input: { city: 'Rome' },
        errorText: 'The answer was interrupted before this tool call finished.',
      },
    ]);
    expect((await runsOf(database, threadId)).map((row) => row.status)).toEqual(['cancelled']);
  });

  it('should keep the answer finalized elsewhere (a stop in another process) and stop its own model call', async () => {
    const { history, threadId } = await newThread(database);
    const second = gatedStream(
      weatherCallStep('Oslo', 'call-2').slice(0, 1),
      weatherCallStep('Oslo', 'call-2').slice(1),
    );
    const model = scriptedModel([weatherCallStep('Oslo'), second.stream, textStep('Never shown.')]);
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-1', 'Weather in Oslo?'),
      model: { agent: new ToolLoopAgent({ model, tools }) },
      ...schemas,
    });
    const reader = turn.stream.getReader();
    for (let chunk = await reader.read(); chunk.value?.type !== 'tool-output-available'; chunk = await reader.read());
    await expect.poll(async () => (await rowsOf(database, threadId))[1]?.status).toBe('streaming');
    // Another process stops the answer: it finalizes the row from its checkpoint (step 1).
    const row = await history.getMessage(threadId, turn.assistantMessageId);
    await history.finalizeMessage(threadId, turn.assistantMessageId, { status: 'cancelled', parts: row.message.parts });
    second.release();
    void (async () => {
      while (!(await reader.read()).done);
    })();
    const stored = await turn.done;
    expect(stored.status).toBe('cancelled');
    expect(stored.message.parts).toEqual(row.message.parts);
    expect(JSON.stringify(stored.message.parts)).not.toContain('Never shown');
    expect((await runsOf(database, threadId)).map((run) => run.status)).toEqual(['cancelled']);
  });

  it('should recover an answer whose writer died (lease expired) instead of refusing the next message', async () => {
    const { history, threadId } = await newThread(database, { leaseMs: 1 });
    await history.appendMessage(threadId, userMessage('u-1', 'Hello'));
    await history.beginAssistantMessage(threadId, { messageId: 'a-dead' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const turn = await streamChatTurn<ChatMessage, typeof tools>({
      history,
      threadId,
      message: userMessage('u-2', 'Anyone there?'),
      model: scriptedSource([textStep('Yes.')]),
    });
    await readAnswer(turn.stream as ReadableStream<UIMessageChunk>);
    await turn.done;
    expect((await rowsOf(database, threadId)).map((row) => [row.message_id, row.status])).toEqual([
      ['u-1', 'completed'],
      ['a-dead', 'failed'],
      ['u-2', 'completed'],
      [turn.assistantMessageId, 'completed'],
    ]);
  });
});
