import { randomUUID } from 'node:crypto';
import { streamText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatThreadId, createChatHandler, offlineThreadTitle, streamChatTurn } from '../../../src/ai-sdk/index.js';
import { createAgentHistory, NotFoundError, type TenantHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { post, rowsOf, runsOf, schemas, scriptedModel, textStep, type ChatMessage } from '../fixtures.js';

/** useChat's default id: 16 characters of `generateId()`, not a uuid. */
const USE_CHAT_ID = 'Vd2Lq8sYx1pT0aZc';
const hello = (id = 'u-1', text = 'What is the weather in Lisbon tomorrow?') => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** A model that answers with a title, recording what it was sent. */
const titleModel = (text: string) =>
  new MockLanguageModelV4({
    doGenerate: {
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 5, text: 5, reasoning: undefined },
      },
      warnings: [],
    },
  });

function handlerFor(history: TenantHistory, user: string | undefined, extra: Record<string, unknown> = {}) {
  let ids = 0;
  return createChatHandler<ChatMessage>({
    getHistory: () => history,
    getUserId: () => user,
    createThreads: 'on-first-message',
    ...schemas,
    generateMessageId: () => `a-${randomUUID()}-${++ids}`,
    model: {
      streamText: ({ messages, abortSignal }) =>
        streamText({ model: scriptedModel([textStep('Sunny, 24 degrees.')]), messages, abortSignal }),
    },
    ...extra,
  });
}

async function threadsOf(database: TestDatabase, tenantId: string) {
  return database.admin.query<{ id: string; user_id: string | null; title: string | null }>(
    'select id, user_id, title from agent_thread where tenant_id = $1 order by created_at',
    [tenantId],
  );
}

describe('chatThreadId', () => {
  it('should keep a uuid (lower-cased) and map any other id to the same version 5 uuid every time', () => {
    const uuid = randomUUID();
    expect(chatThreadId(uuid.toUpperCase())).toBe(uuid);
    expect(chatThreadId(USE_CHAT_ID)).toBe(chatThreadId(USE_CHAT_ID));
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.string({ minLength: 1, maxLength: 200 }), (a, b) => {
        const [x, y] = [chatThreadId(a), chatThreadId(b)];
        expect(x).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(chatThreadId(a)).toBe(x);
        if (a !== b) expect(x).not.toBe(y);
      }),
    );
  });

  it("should map a non-uuid id within each user's namespace: one thread per (user, id), a uuid stays itself", () => {
    const uuid = randomUUID();
    expect(chatThreadId(uuid, { userId: 'alice' })).toBe(uuid);
    expect(chatThreadId(USE_CHAT_ID, { userId: null })).toBe(chatThreadId(USE_CHAT_ID));
    fc.assert(
      fc.property(
        fc.tuple(fc.string({ maxLength: 12 }), fc.string({ minLength: 1, maxLength: 12 })),
        fc.tuple(fc.string({ maxLength: 12 }), fc.string({ minLength: 1, maxLength: 12 })),
        ([userA, chatA], [userB, chatB]) => {
          const a = chatThreadId(chatA, { userId: userA || undefined });
          expect(chatThreadId(chatA, { userId: userA || undefined })).toBe(a);
          // A user's id never meets another user's, nor the id without a user (a length prefix separates them).
          if (userA !== userB || chatA !== chatB)
            expect(chatThreadId(chatB, { userId: userB || undefined })).not.toBe(a);
          if (userA) expect(chatThreadId(chatA)).not.toBe(a);
        },
      ),
    );
  });

  it('should refuse an empty or overlong id, and a user id that is not a string', () => {
    expect(() => chatThreadId('')).toThrow('expected a chat id of 1 to 200 characters');
    expect(() => chatThreadId('x'.repeat(201))).toThrow('expected a chat id of 1 to 200 characters');
    expect(() => chatThreadId('support', { userId: 42 as never })).toThrow('expected a string without lone surrogates');
    // Lone surrogates all become U+FFFD in UTF-8: they would put two users in one namespace.
    expect(() => chatThreadId('support', { userId: '\ud800' })).toThrow('expected a string without lone surrogates');
    expect(() => chatThreadId('chat-\udfff')).toThrow('without lone surrogates');
  });
});

describe.each(BACKENDS)('createThreads on %s', (backend) => {
  const database = useTestDatabase(backend);
  const newTenant = () => {
    const tenantId = randomUUID();
    return { tenantId, history: createAgentHistory({ db: database.db }).forTenant(tenantId) };
  };

  it("should create the thread of useChat's own id on the first message, owned by the user", async () => {
    const { tenantId, history } = newTenant();
    const response = await handlerFor(history, 'alice').POST(
      post({ id: USE_CHAT_ID, messages: [hello()], trigger: 'submit-message' }),
    );
    expect(response.status).toBe(200);
    const threadId = chatThreadId(USE_CHAT_ID, { userId: 'alice' });
    expect(response.headers.get('x-agent-history-thread-id')).toBe(threadId);
    await response.text();
    expect(await threadsOf(database, tenantId)).toEqual([{ id: threadId, user_id: 'alice', title: null }]);
    expect((await rowsOf(database, threadId)).map((row) => [row.role, row.status])).toEqual([
      ['user', 'completed'],
      ['assistant', 'completed'],
    ]);
    // The next message of the same chat goes to the same thread.
    const second = await handlerFor(history, 'alice').POST(
      post({ id: USE_CHAT_ID, messages: [hello('u-2', 'And Porto?')] }),
    );
    expect(second.status).toBe(200);
    await second.text();
    expect(await rowsOf(database, threadId)).toHaveLength(4);
    expect(await threadsOf(database, tenantId)).toHaveLength(1);
  });

  it('should use a uuid made by the client as the thread id', async () => {
    const { tenantId, history } = newTenant();
    const id = randomUUID();
    const response = await handlerFor(history, 'alice').POST(post({ id, messages: [hello()] }));
    expect(response.status).toBe(200);
    await response.text();
    expect(await threadsOf(database, tenantId)).toEqual([{ id, user_id: 'alice', title: null }]);
  });

  it('should give another user the same answer for an id someone uses as for an unused one: a thread of their own', async () => {
    // Mallory claims `support` first; Alice's `support` is still hers, and Mallory cannot tell that Alice has one.
    const { tenantId, history } = newTenant();
    const claimed = await handlerFor(history, 'mallory').POST(post({ id: 'support', messages: [hello('u-9')] }));
    expect(claimed.status).toBe(200);
    await claimed.text();
    const alices = await handlerFor(history, 'alice').POST(post({ id: 'support', messages: [hello()] }));
    expect(alices.status).toBe(200);
    await alices.text();
    const [aliceThread, malloryThread] = ['alice', 'mallory'].map((userId) => chatThreadId('support', { userId }));
    expect(alices.headers.get('x-agent-history-thread-id')).toBe(aliceThread);
    const before = await rowsOf(database, aliceThread);
    const again = await handlerFor(history, 'mallory').POST(post({ id: 'support', messages: [hello('u-10', 'Hi?')] }));
    expect(again.status).toBe(200);
    await again.text();
    expect(await rowsOf(database, aliceThread)).toEqual(before);
    expect(await threadsOf(database, tenantId)).toEqual([
      { id: malloryThread, user_id: 'mallory', title: null },
      { id: aliceThread, user_id: 'alice', title: null },
    ]);
  });

  it("should not let a user take the uuid another user's chat id maps to, nor tell whether it is used", async () => {
    const { tenantId, history } = newTenant();
    const bobs = chatThreadId('support', { userId: 'bob' });
    const squat = await handlerFor(history, 'alice').POST(post({ id: bobs, messages: [hello('u-9')] }));
    expect([squat.status, (await squat.json()).error.code]).toEqual([404, 'thread-not-found']);
    expect(await threadsOf(database, tenantId)).toEqual([]);
    const own = await handlerFor(history, 'bob').POST(post({ id: 'support', messages: [hello()] }));
    expect(own.status).toBe(200);
    await own.text();
    const probe = await handlerFor(history, 'alice').POST(post({ id: bobs, messages: [hello('u-10')] }));
    expect([probe.status, (await probe.json()).error.code]).toEqual([404, 'thread-not-found']);
    expect(await threadsOf(database, tenantId)).toEqual([{ id: bobs, user_id: 'bob', title: null }]);
  });

  it('should map a chat id alike in the chat, stop and resume routes when getUserId answers null', async () => {
    const tenantId = randomUUID();
    const history = createAgentHistory({ db: database.db }).forTenant(tenantId, { userId: 'alice' });
    const handler = handlerFor(history, null as never);
    const posted = await handler.POST(post({ id: 'support', messages: [hello()] }));
    expect(posted.headers.get('x-agent-history-thread-id')).toBe(chatThreadId('support', { userId: 'alice' }));
    await posted.text();
    const stopped = await handler.stop(
      new Request('http://localhost/api/chat/stop', { method: 'POST', body: JSON.stringify({ id: 'support' }) }),
    );
    expect([stopped.status, await stopped.json()]).toEqual([200, { message: null, status: null }]);
  });

  it("should map the chat id in the user's namespace of a store scoped to that user, without getUserId", async () => {
    const tenantId = randomUUID();
    const scoped = (userId: string) => createAgentHistory({ db: database.db }).forTenant(tenantId, { userId });
    for (const userId of ['alice', 'mallory']) {
      const response = await handlerFor(scoped(userId), undefined).POST(post({ id: 'support', messages: [hello()] }));
      expect(response.status).toBe(200);
      expect(response.headers.get('x-agent-history-thread-id')).toBe(chatThreadId('support', { userId }));
      await response.text();
    }
    expect((await threadsOf(database, tenantId)).map((thread) => thread.user_id)).toEqual(['alice', 'mallory']);
  });

  it("should answer 404 to another user's uuid chat, as to a missing one, and write nothing", async () => {
    const { tenantId, history } = newTenant();
    const id = randomUUID();
    await (await handlerFor(history, 'alice').POST(post({ id, messages: [hello()] }))).text();
    const before = await rowsOf(database, id);
    const response = await handlerFor(history, 'mallory').POST(post({ id, messages: [hello('u-9')] }));
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe('thread-not-found');
    expect(await rowsOf(database, id)).toEqual(before);
    expect(await threadsOf(database, tenantId)).toHaveLength(1);
  });

  it("should refuse to stop another user's chat (404) and stop one's own", async () => {
    const { history } = newTenant();
    await (await handlerFor(history, 'alice').POST(post({ id: USE_CHAT_ID, messages: [hello()] }))).text();
    const stop = (user: string) =>
      handlerFor(history, user).stop(
        new Request('http://localhost/api/chat/stop', { method: 'POST', body: JSON.stringify({ id: USE_CHAT_ID }) }),
      );
    const foreign = await stop('mallory');
    expect([foreign.status, (await foreign.json()).error.code]).toEqual([404, 'thread-not-found']);
    const own = await stop('alice');
    expect([own.status, await own.json()]).toEqual([200, { message: null, status: null }]);
  });

  it('should create no thread for an invalid first message, a regeneration or an edit', async () => {
    const { tenantId, history } = newTenant();
    const handler = handlerFor(history, 'alice');
    const bodies = [
      { id: USE_CHAT_ID, messages: [{ id: 'u-1', role: 'user', parts: [] }] },
      { id: USE_CHAT_ID, messages: [{ id: 'u-1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] },
      { id: USE_CHAT_ID, trigger: 'regenerate-message', messages: [] },
      { id: USE_CHAT_ID, messages: [hello()], messageId: 'u-0' },
    ];
    const statuses = [];
    for (const body of bodies) statuses.push((await handler.POST(post(body))).status);
    expect(statuses).toEqual([400, 400, 404, 404]);
    expect(await threadsOf(database, tenantId)).toEqual([]);
  });

  it('should make one thread, one user message and one answer when two first messages race', async () => {
    for (let round = 0; round < 5; round++) {
      const { tenantId, history } = newTenant();
      const chatId = `race-${round}`;
      const body = { id: chatId, messages: [hello()] };
      const responses = await Promise.all([
        handlerFor(history, 'alice').POST(post(body)),
        handlerFor(history, 'alice').POST(post(body)),
      ]);
      await Promise.all(responses.map((response) => response.text()));
      expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
      const threadId = chatThreadId(chatId, { userId: 'alice' });
      expect(await threadsOf(database, tenantId)).toEqual([{ id: threadId, user_id: 'alice', title: null }]);
      const rows = await rowsOf(database, threadId);
      expect(rows.map((row) => row.role)).toEqual(['user', 'assistant']);
      expect((await runsOf(database, threadId)).filter((run) => run.status === 'completed')).toHaveLength(1);
    }
  });

  it('should answer 404 without createThreads, as before', async () => {
    const { tenantId, history } = newTenant();
    const response = await handlerFor(history, 'alice', { createThreads: 'never' }).POST(
      post({ id: USE_CHAT_ID, messages: [hello()] }),
    );
    expect(response.status).toBe(404);
    expect(await threadsOf(database, tenantId)).toEqual([]);
  });

  describe('generateTitle', () => {
    it('should title the thread from the first exchange with the model, once', async () => {
      const { tenantId, history } = newTenant();
      const model = titleModel('"Lisbon weather tomorrow"\n');
      const turn = await streamChatTurn<ChatMessage>({
        history,
        threadId: USE_CHAT_ID,
        userId: 'alice',
        message: hello(),
        createThreads: 'on-first-message',
        generateTitle: model,
        ...schemas,
        model: { streamText: ({ messages }) => streamText({ model: scriptedModel([textStep('Sunny.')]), messages }) },
      });
      await turn.toResponse().text();
      expect(await turn.title).toBe('Lisbon weather tomorrow');
      expect(await threadsOf(database, tenantId)).toEqual([
        { id: chatThreadId(USE_CHAT_ID, { userId: 'alice' }), user_id: 'alice', title: 'Lisbon weather tomorrow' },
      ]);
      expect(model.doGenerateCalls).toHaveLength(1);
      expect(model.doGenerateCalls[0]!.prompt.at(-1)).toEqual({
        role: 'user',
        content: [{ type: 'text', text: 'User: What is the weather in Lisbon tomorrow?\n\nAssistant: Sunny.' }],
      });

      const next = await streamChatTurn<ChatMessage>({
        history,
        threadId: USE_CHAT_ID,
        userId: 'alice',
        message: hello('u-2', 'And Porto?'),
        createThreads: 'on-first-message',
        generateTitle: model,
        ...schemas,
        model: { streamText: ({ messages }) => streamText({ model: scriptedModel([textStep('Rain.')]), messages }) },
      });
      await next.toResponse().text();
      expect(await next.title).toBeNull();
      expect(model.doGenerateCalls).toHaveLength(1);
    });

    it('should keep a title the thread has, and title offline deterministically', async () => {
      const { history } = newTenant();
      const thread = await history.createThread({ title: 'Mine' });
      const turn = await streamChatTurn<ChatMessage>({
        history,
        threadId: thread.id,
        message: hello(),
        generateTitle: offlineThreadTitle,
        ...schemas,
        model: { streamText: ({ messages }) => streamText({ model: scriptedModel([textStep('Sunny.')]), messages }) },
      });
      await turn.toResponse().text();
      expect(await turn.title).toBeNull();
      expect((await history.getThread(thread.id)).title).toBe('Mine');
      expect(offlineThreadTitle({ userText: 'What is the weather in Lisbon tomorrow?', answerText: '' })).toBe(
        'What is the weather in Lisbon',
      );
    });
  });

  it('should refuse a thread of another user with NotFoundError in streamChatTurn', async () => {
    const { history } = newTenant();
    const thread = await history.createThread({ userId: 'alice' });
    await expect(
      streamChatTurn<ChatMessage>({
        history,
        threadId: thread.id,
        userId: 'bob',
        message: hello(),
        ...schemas,
        model: { streamText: ({ messages }) => streamText({ model: scriptedModel([textStep('x')]), messages }) },
      }),
    ).rejects.toThrow(NotFoundError);
  });
});
