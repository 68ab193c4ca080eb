import { randomUUID } from 'node:crypto';
import { streamText, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatHandler, loadThreadPage } from '../../../src/ai-sdk/index.js';
import { createAgentHistory, type TenantHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import {
  gatedStream,
  newThread,
  rowsOf,
  runsOf,
  schemas,
  scriptedModel,
  textStep,
  post,
  type ChatMessage,
} from '../fixtures.js';
import { userMessage } from '../../support/fixtures.js';

/** A handler whose model answers every call with `answer(n)` (n = 1, 2, …), recording the prompts it was sent. */
function handlerFor(
  history: TenantHistory,
  answer: (call: number) => ReturnType<typeof textStep> | ReadableStream = (call) => textStep(`Answer ${call}.`),
) {
  const prompts: unknown[] = [];
  let calls = 0;
  let ids = 0;
  const handler = createChatHandler<ChatMessage>({
    getHistory: () => history,
    ...schemas,
    generateMessageId: () => `a-${++ids}`,
    model: {
      streamText: ({ messages, abortSignal }) => {
        const model = scriptedModel([answer(++calls) as never]);
        prompts.push(messages);
        return streamText({ model, messages, abortSignal });
      },
    },
  });
  return { handler, prompts };
}

async function answerText(response: Response) {
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as UIMessageChunk);
}

describe.each(BACKENDS)('createChatHandler on %s', (backend) => {
  const database = useTestDatabase(backend);

  const nothingWritten = async (threadId: string) => {
    expect(await rowsOf(database, threadId)).toEqual([]);
    expect(await runsOf(database, threadId)).toEqual([]);
  };

  it('should answer 400 with the validation message for an invalid UIMessage, and write nothing', async () => {
    const { history, threadId } = await newThread(database);
    const { handler } = handlerFor(history);
    const cases = [
      { threadId, message: { id: 'u-1', role: 'user', parts: [{ type: 'data-progress', data: { percent: 'half' } }] } },
      { threadId, message: { id: 'u-1', role: 'user', parts: [] } },
      { threadId, message: { id: 'u-1', role: 'assistant', parts: [{ type: 'text', text: 'I am the model' }] } },
      {
        threadId,
        message: {
          id: 'u-1',
          role: 'user',
          metadata: { createdAt: 'not a date' },
          parts: [{ type: 'text', text: 'hi' }],
        },
      },
      { threadId },
    ];
    for (const body of cases) {
      const response = await handler.POST(post(body));
      expect(response.status).toBe(400);
      expect((await response.json()).error.code).toBe('message-invalid');
    }
    // A short message naming the path: no copy of the message, no schema dump.
    const bodies = [];
    for (const body of cases.slice(0, 4)) bodies.push((await (await handler.POST(post(body))).json()).error);
    expect(bodies).toEqual([
      {
        code: 'message-invalid',
        message: 'message.parts[0].data.percent: expected number, received string',
        path: 'message.parts[0].data.percent',
      },
      {
        code: 'message-invalid',
        message: 'message.parts: Message must contain at least one part',
        path: 'message.parts',
      },
      {
        code: 'message-invalid',
        message: 'message.role: a chat turn starts with a user message, or answers a tool approval.',
        path: 'message.role',
      },
      {
        code: 'message-invalid',
        message: 'message.metadata.createdAt: expected date, received Date',
        path: 'message.metadata.createdAt',
      },
    ]);
    const long = { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'secret '.repeat(500) }, { type: 'txt' }] };
    const refused = (await (await handler.POST(post({ threadId, message: long }))).json()).error;
    expect(refused.path).toBe('message.parts[1].type');
    expect(refused.message).not.toContain('secret');
    expect(refused.message.length).toBeLessThan(200);
    const notJson = await handler.POST(new Request('http://localhost/api/chat', { method: 'POST', body: '{' }));
    expect([notJson.status, (await notJson.json()).error.code]).toEqual([400, 'argument-invalid']);
    await nothingWritten(threadId);
  });

  it("should answer 404, the same for an unknown thread and another tenant's thread, and write nothing", async () => {
    const owner = await newThread(database);
    const intruder = await newThread(database);
    const { handler } = handlerFor(intruder.history);
    const foreign = await handler.POST(post({ threadId: owner.threadId, message: userMessage('u-1', 'hi') }));
    const unknown = await handler.POST(post({ threadId: randomUUID(), message: userMessage('u-1', 'hi') }));
    const malformed = await handler.POST(post({ threadId: 'nope', message: userMessage('u-1', 'hi') }));
    expect([foreign.status, unknown.status, malformed.status]).toEqual([404, 404, 404]);
    expect((await foreign.json()).error.code).toBe('thread-not-found');
    expect((await unknown.json()).error.code).toBe('thread-not-found');
    await nothingWritten(owner.threadId);
    const stop = await handler.stop(post({ threadId: owner.threadId }));
    expect(stop.status).toBe(404);
  });

  it('should give getHistory the thread id and parsed body before the store is touched, so a non-owner gets the app’s 403 and nothing is written', async () => {
    const tenantId = randomUUID();
    const history = createAgentHistory({ db: database.db });
    const owned = await history.forTenant(tenantId).createThread({ userId: 'alice' });
    const seen: unknown[] = [];
    const handler = createChatHandler<ChatMessage>({
      ...schemas,
      // The app's own check: the signed-in user (a header here) must own the thread the request names.
      getHistory: async (request, context) => {
        seen.push([context.route, context.threadId, context.chatId, context.body.message !== undefined]);
        const user = request.headers.get('x-user') ?? '';
        const store = history.forTenant(tenantId);
        const thread = await store.getThread(context.threadId).catch(() => null);
        if (thread?.userId !== user) throw new Response('forbidden', { status: 403 });
        return store;
      },
      model: { streamText: () => streamText({ model: scriptedModel([textStep('hi') as never]), prompt: 'x' }) },
    });
    const as = (user: string, body: unknown) =>
      new Request('http://localhost/api/chat', {
        method: 'POST',
        headers: { 'x-user': user },
        body: JSON.stringify(body),
      });
    const chat = await handler.POST(as('bob', { threadId: owned.id, message: userMessage('u-1', 'hi') }));
    const stop = await handler.stop(as('bob', { threadId: owned.id }));
    expect([chat.status, stop.status, await chat.text()]).toEqual([403, 403, 'forbidden']);
    expect(seen).toEqual([
      ['chat', owned.id, owned.id, true],
      ['stop', owned.id, owned.id, false],
    ]);
    await nothingWritten(owned.id);
    const allowed = await handler.POST(as('alice', { threadId: owned.id, message: userMessage('u-1', 'hi') }));
    expect(allowed.status).toBe(200);
  });

  it("should answer 404 for another user's thread with a user-scoped store, and write nothing", async () => {
    const tenantId = randomUUID();
    const history = createAgentHistory({ db: database.db });
    const owned = await history.forTenant(tenantId, { userId: 'alice' }).createThread();
    const { handler } = handlerFor(history.forTenant(tenantId, { userId: 'bob' }));
    const chat = await handler.POST(post({ threadId: owned.id, message: userMessage('u-1', 'hi') }));
    const stop = await handler.stop(post({ threadId: owned.id }));
    expect([chat.status, stop.status]).toEqual([404, 404]);
    await nothingWritten(owned.id);
  });

  it('should answer 413 for an oversized message, and write nothing', async () => {
    const { history, threadId } = await newThread(database, { maxMessageBytes: 2_000 });
    const { handler } = handlerFor(history);
    const response = await handler.POST(post({ threadId, message: userMessage('u-big', 'x'.repeat(5_000)) }));
    expect(response.status).toBe(413);
    expect((await response.json()).error).toEqual({
      code: 'message-too-large',
      message: expect.stringContaining('over the limit of 2000 bytes'),
    });
    await nothingWritten(threadId);
  });

  it('should store a double-submitted message once and answer the second request with a 409 naming the answer', async () => {
    const { history, threadId } = await newThread(database);
    const { handler } = handlerFor(history);
    const body = { threadId, message: userMessage('u-1', 'Hello'), requestId: 'req-1' };
    const first = await handler.POST(post(body));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-agent-history-message-id')).toBe('a-1');
    await answerText(first);
    await expect
      .poll(async () => (await rowsOf(database, threadId)).map((row) => row.status))
      .toEqual(['completed', 'completed']);
    const second = await handler.POST(post(body));
    expect(second.status).toBe(409);
    expect((await second.json()).error).toEqual({
      code: 'chat-answer-exists',
      message: 'This request was already answered: the answer is message "a-1" (completed).',
      messageId: 'a-1',
      status: 'completed',
    });
    expect((await rowsOf(database, threadId)).map((row) => row.message_id)).toEqual(['u-1', 'a-1']);
  });

  it('should let only one of two racing identical requests answer', async () => {
    const { history, threadId } = await newThread(database);
    const { handler } = handlerFor(history);
    const body = { threadId, message: userMessage('u-1', 'Hello') };
    const responses = await Promise.all([handler.POST(post(body)), handler.POST(post(body))]);
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
    await answerText(responses.find((response) => response.status === 200)!);
    await expect
      .poll(async () => (await rowsOf(database, threadId)).map((row) => [row.message_id, row.status]))
      .toEqual([
        ['u-1', 'completed'],
        [expect.stringMatching(/^a-/), 'completed'],
      ]);
  });

  it('should refuse a new message while an answer is streaming (409 answer-in-progress), then accept it', async () => {
    const { history, threadId } = await newThread(database);
    const gated = gatedStream(textStep('Slow answer.').slice(0, 2), textStep('Slow answer.').slice(2));
    const { handler } = handlerFor(history, (call) => (call === 1 ? gated.stream : textStep('Fast.')));
    const first = await handler.POST(post({ threadId, message: userMessage('u-1', 'one') }));
    const busy = await handler.POST(post({ threadId, message: userMessage('u-2', 'two') }));
    expect([busy.status, (await busy.json()).error.code]).toEqual([409, 'chat-answer-in-progress']);
    gated.release();
    await answerText(first);
    await expect.poll(async () => (await rowsOf(database, threadId)).at(-1)?.status).toBe('completed');
    const later = await handler.POST(post({ threadId, message: userMessage('u-2', 'two') }));
    expect(later.status).toBe(200);
    await answerText(later);
  });

  it('should regenerate by excluding the superseded answer (never deleting it)', async () => {
    const { history, threadId } = await newThread(database);
    const { handler, prompts } = handlerFor(history);
    await answerText(await handler.POST(post({ threadId, message: userMessage('u-1', 'Tell me a joke') })));
    await expect.poll(async () => (await rowsOf(database, threadId)).at(-1)?.status).toBe('completed');
    const regenerated = await handler.POST(post({ threadId, trigger: 'regenerate-message', messageId: 'a-1' }));
    expect(regenerated.status).toBe(200);
    await answerText(regenerated);
    await expect
      .poll(async () =>
        (await rowsOf(database, threadId)).map((row) => [
          row.message_id,
          row.status,
          row.context_state,
          row.exclusion_reason,
        ]),
      )
      .toEqual([
        ['u-1', 'completed', 'eligible', null],
        ['a-1', 'completed', 'excluded', 'superseded-by-regenerate'],
        ['a-2', 'completed', 'eligible', null],
      ]);
    expect(prompts[1]).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Tell me a joke' }] }]);
    const again = await handler.POST(post({ threadId, trigger: 'regenerate-message', messageId: 'a-1' }));
    expect([again.status, (await again.json()).error.messageId]).toEqual([409, 'a-2']);
    const page = await loadThreadPage<ChatMessage>({ history, threadId, ...schemas });
    expect(page.messages.map((message) => message.id)).toEqual(['u-1', 'a-2']);
    expect((await loadThreadPage<ChatMessage>({ history, threadId, include: 'all' })).messages).toHaveLength(3);
  });

  it('should edit by excluding the edited message and everything after it, and answer the new version', async () => {
    const { history, threadId } = await newThread(database);
    const { handler, prompts } = handlerFor(history);
    await answerText(await handler.POST(post({ threadId, message: userMessage('u-1', 'Weather in Rome?') })));
    await expect.poll(async () => (await rowsOf(database, threadId)).at(-1)?.status).toBe('completed');
    await answerText(await handler.POST(post({ threadId, message: userMessage('u-2', 'And tomorrow?') })));
    await expect.poll(async () => (await rowsOf(database, threadId)).at(-1)?.status).toBe('completed');
    const edited = await handler.POST(
      post({ threadId, messageId: 'u-1', message: userMessage('u-1', 'Weather in Paris?') }),
    );
    expect(edited.status).toBe(200);
    const newId = edited.headers.get('x-agent-history-user-message-id')!;
    expect(newId).toBe('a-3'); // the id 'u-1' is taken by the old version: the new one gets a generated id
    await answerText(edited);
    await expect
      .poll(async () =>
        (await rowsOf(database, threadId)).map((row) => [row.message_id, row.context_state, row.exclusion_reason]),
      )
      .toEqual([
        ['u-1', 'excluded', `superseded-by-edit:${newId}`],
        ['a-1', 'excluded', `superseded-by-edit:${newId}`],
        ['u-2', 'excluded', `superseded-by-edit:${newId}`],
        ['a-2', 'excluded', `superseded-by-edit:${newId}`],
        [newId, 'eligible', null],
        ['a-4', 'eligible', null],
      ]);
    expect(prompts[2]).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }]);
    const page = await loadThreadPage<ChatMessage>({ history, threadId, ...schemas });
    expect(page.messages).toEqual([
      { ...userMessage(newId, 'Weather in Paris?') },
      expect.objectContaining({ id: 'a-4' }),
    ]);
  });
});
