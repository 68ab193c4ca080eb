import { randomUUID } from 'node:crypto';
import { streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { chatThreadId, createChatHandler, type ResumableStreamOptions } from '../../../src/ai-sdk/index.js';
import { createAgentHistory, type TenantHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { userMessage } from '../../support/fixtures.js';
import { gatedStream, newThread, post, schemas, scriptedModel, textStep, type ChatMessage } from '../fixtures.js';

const ANSWER = textStep('The answer comes in several words.');

/** A handler whose model streams ANSWER in two halves: the second one when `release()` is called. */
function gatedHandler(
  getHistory: (request: Request) => TenantHistory,
  options: { resumable?: boolean | ResumableStreamOptions; userOf?: (request: Request) => string | undefined } = {},
) {
  const gated = gatedStream(ANSWER.slice(0, 4), ANSWER.slice(4));
  const handler = createChatHandler<ChatMessage>({
    getHistory,
    getUserId: options.userOf,
    ...schemas,
    createThreads: 'on-first-message',
    resumable: options.resumable ?? { flushMs: 5 },
    model: {
      streamText: ({ messages, abortSignal }) =>
        streamText({ model: scriptedModel([gated.stream as never]), messages, abortSignal }),
    },
  });
  return { handler, release: gated.release };
}

/** The data lines of a server-sent-events body, in order (`[DONE]` included). */
async function sseData(response: Response): Promise<string[]> {
  return (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
}

const get = (chatId: string, headers: Record<string, string> = {}) =>
  new Request(`http://localhost/api/chat/${encodeURIComponent(chatId)}/stream`, { headers });

describe.each(BACKENDS)('createChatHandler GET (resume) on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should replay the answer in progress from another request, byte for byte the POST’s stream', async () => {
    const { history, threadId } = await newThread(database);
    // Each request gets its own store, as in an app.
    const storeOf = () => createAgentHistory({ db: database.db }).forTenant(history.tenantId);
    const { handler, release } = gatedHandler(storeOf);
    const posted = await handler.POST(post({ threadId, message: userMessage('u-1', 'Explain') }));
    expect(posted.status).toBe(200);
    const postBody = sseData(posted);
    const resumed = await handler.GET(get(threadId));
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toContain('text/event-stream');
    expect(resumed.headers.get('x-agent-history-message-id')).toBe(posted.headers.get('x-agent-history-message-id'));
    const resumedBody = sseData(resumed);
    release();
    expect(await resumedBody).toEqual(await postBody);
    expect((await resumedBody).at(-1)).toBe('[DONE]');
    // Nothing is streaming now: 204.
    expect((await handler.GET(get(threadId))).status).toBe(204);
  });

  it('should answer 204 for a chat without a thread yet, another tenant’s and another user’s, and when not resumable', async () => {
    const { history, threadId } = await newThread(database);
    const { handler, release } = gatedHandler(() => history, { userOf: (request) => request.headers.get('x-user')! });
    const posted = await handler.POST(
      new Request('http://localhost/api/chat', {
        method: 'POST',
        headers: { 'x-user': 'u1' },
        body: JSON.stringify({ threadId, message: userMessage('u-1', 'Explain') }),
      }),
    );
    const postBody = sseData(posted);
    expect((await handler.GET(get(threadId, { 'x-user': 'u1' }))).status).toBe(200);
    expect((await handler.GET(get(threadId, { 'x-user': 'someone-else' }))).status).toBe(204);
    const otherTenant = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const { handler: foreign } = gatedHandler(() => otherTenant);
    expect((await foreign.GET(get(threadId))).status).toBe(204);
    expect((await handler.GET(get('never-used-chat-id', { 'x-user': 'u1' }))).status).toBe(204);
    const { handler: notResumable } = gatedHandler(() => history, { resumable: false });
    expect((await notResumable.GET(get(threadId))).status).toBe(204);
    release();
    await postBody;
  });

  it('should authorize the GET with getHistory, as the POST', async () => {
    const { handler } = gatedHandler(() => {
      throw new Response('no session', { status: 401 });
    });
    const response = await handler.GET(get(randomUUID()));
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('no session');
  });

  it('should resume a chat created on its first message under the client’s own id', async () => {
    const { history } = await newThread(database);
    const { handler, release } = gatedHandler(() => history);
    const chatId = 'client-made-id-1';
    const posted = await handler.POST(post({ id: chatId, messages: [userMessage('u-1', 'Hi')] }));
    expect(posted.headers.get('x-agent-history-thread-id')).toBe(chatThreadId(chatId));
    const postBody = sseData(posted);
    const resumed = sseData(await handler.GET(get(chatId)));
    release();
    expect(await resumed).toEqual(await postBody);
  });
});
