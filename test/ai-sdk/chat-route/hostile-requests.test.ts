import { simulateReadableStream, streamText } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it, vi } from 'vitest';
import { createChatHandler, type CreateChatHandlerOptions } from '../../../src/ai-sdk/index.js';
import type { TenantHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { newThread, post, rowsOf, runsOf, schemas, textStep, type ChatMessage } from '../fixtures.js';

/**
 * A handler whose model takes every URL itself (so the AI SDK never downloads one in the test) and records the
 * prompts it was sent.
 */
function handlerFor(history: TenantHistory, options: Partial<CreateChatHandlerOptions<ChatMessage>> = {}) {
  const models: MockLanguageModelV4[] = [];
  let ids = 0;
  const handler = createChatHandler<ChatMessage>({
    getHistory: () => history,
    ...schemas,
    generateMessageId: () => `a-${++ids}`,
    model: {
      streamText: ({ messages, abortSignal }) => {
        const model = new MockLanguageModelV4({
          supportedUrls: { '*': [/.*/] },
          doStream: (async () => ({
            stream: simulateReadableStream({ chunks: textStep('Seen.'), initialDelayInMs: null, chunkDelayInMs: 0 }),
          })) as never,
        });
        models.push(model);
        return streamText({ model, messages, abortSignal });
      },
    },
    ...options,
  });
  const prompts = () => models.flatMap((model) => model.doStreamCalls.map((call) => call.prompt));
  return { handler, prompts };
}

const fileMessage = (id: string, file: Record<string, unknown>) => ({
  id,
  role: 'user',
  parts: [
    { type: 'text', text: 'What is in this file?' },
    { type: 'file', mediaType: 'text/plain', ...file },
  ],
});

describe.each(BACKENDS)('hostile chat requests on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should refuse a remote file URL with a 400 naming it, write nothing and call no model', async () => {
    const { history, threadId } = await newThread(database);
    const { handler, prompts } = handlerFor(history);
    const urls = [
      'http://127.0.0.1:8080/internal/secrets',
      'https://metadata.google.internal/computeMetadata/v1/',
      'http://[::1]/',
      'ftp://files.example.com/a.txt',
      'file:///etc/passwd',
      'not a url',
    ];
    for (const url of urls) {
      const response = await handler.POST(post({ threadId, message: fileMessage('u-1', { url }) }));
      expect(response.status).toBe(400);
      const { error } = await response.json();
      expect(error.code).toBe('file-url-not-allowed');
      expect(error.message).toContain(JSON.stringify(url));
      expect(error.message).toContain('message.parts[1].url');
    }
    expect(await rowsOf(database, threadId)).toEqual([]);
    expect(await runsOf(database, threadId)).toEqual([]);
    expect(prompts()).toEqual([]);
  });

  it('should accept a data URL, a provider file reference, and a URL under an allowed prefix', async () => {
    const { history, threadId } = await newThread(database);
    const allowed = handlerFor(history, { allowedFileUrls: ['https://cdn.example.com/uploads/'] });
    const bodies = [
      fileMessage('u-1', { url: 'data:text/plain;base64,aGk=' }),
      fileMessage('u-2', { url: 'http://127.0.0.1/x', providerReference: { openai: 'file-abc' } }),
      fileMessage('u-3', { url: 'https://cdn.example.com/uploads/a.txt' }),
    ];
    for (const message of bodies) {
      const response = await allowed.handler.POST(post({ threadId, message }));
      expect(response.status).toBe(200);
      await response.text();
    }
    const refused = [
      'https://cdn.example.com.evil.net/uploads/a.txt',
      'https://cdn.example.com/other/a.txt',
      'https://cdn.example.com/uploads/../admin',
      'http://cdn.example.com/uploads/a.txt',
      'https://cdn.example.com:8443/uploads/a.txt',
    ];
    for (const url of refused) {
      const response = await allowed.handler.POST(post({ threadId, message: fileMessage('u-9', { url }) }));
      expect([response.status, (await response.json()).error.code]).toEqual([400, 'file-url-not-allowed']);
    }
  });

  it('should strip client providerMetadata from user parts before they are stored or sent, unless allowed', async () => {
    const { history, threadId } = await newThread(database);
    const forged = { anthropic: { cacheControl: { type: 'ephemeral' } }, openai: { store: true } };
    const message = {
      id: 'u-1',
      role: 'user',
      parts: [{ type: 'text', text: 'hello', providerMetadata: forged }],
    };
    const strict = handlerFor(history);
    await (await strict.handler.POST(post({ threadId, message }))).text();
    expect(JSON.stringify(strict.prompts())).not.toContain('cacheControl');
    expect(JSON.stringify((await rowsOf(database, threadId))[0])).not.toContain('cacheControl');

    const other = await newThread(database);
    const open = handlerFor(other.history, { allowClientProviderMetadata: true });
    await (await open.handler.POST(post({ threadId: other.threadId, message }))).text();
    expect(JSON.stringify(open.prompts())).toContain('cacheControl');
  });

  it('should read at most historyMaxBytes of the history, newest first, and give the model only that', async () => {
    const { history, threadId } = await newThread(database);
    const big = (id: string, role: 'user' | 'assistant') => ({
      id,
      role,
      parts: [{ type: 'text' as const, text: `${id} ${'z'.repeat(200_000)}` }],
    });
    for (let index = 1; index <= 5; index++) {
      await history.appendMessage(threadId, big(`u-${index}`, 'user'));
      await history.appendMessage(threadId, big(`a-old-${index}`, 'assistant'));
    }
    const listed: number[] = [];
    const counting = new Proxy(history, {
      get: (target, key, receiver) =>
        key === 'listMessages'
          ? async (...args: Parameters<TenantHistory['listMessages']>) => {
              const page = await target.listMessages(...args);
              listed.push(...page.messages.map((row) => row.byteSize));
              return page;
            }
          : Reflect.get(target, key, receiver),
    });
    const { handler, prompts } = handlerFor(counting, { historyMaxBytes: 500_000 });
    const response = await handler.POST(
      post({ threadId, message: { id: 'u-new', role: 'user', parts: [{ type: 'text', text: 'and now?' }] } }),
    );
    expect(response.status).toBe(200);
    await response.text();
    const sent = JSON.stringify(prompts()[0]);
    // The two newest stored messages fit in 500,000 bytes; the older ones are neither read whole nor sent.
    expect(sent).toContain('a-old-5 ');
    expect(sent).toContain('u-5 ');
    expect(sent).not.toContain('a-old-4 ');
    expect(listed.reduce((sum, bytes) => sum + bytes, 0)).toBeLessThan(500_000 + 8 * 200_100);
  });

  it('should keep client requestIds apart from answer keys: a requestId of answer:<id> answers normally', async () => {
    const { history, threadId } = await newThread(database);
    const { handler } = handlerFor(history);
    // The attacker's message takes the key the route uses for the answer to u-victim.
    const first = await handler.POST(
      post({
        threadId,
        requestId: 'answer:u-victim',
        message: { id: 'u-attacker', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
      }),
    );
    await first.text();
    const victim = await handler.POST(
      post({ threadId, message: { id: 'u-victim', role: 'user', parts: [{ type: 'text', text: 'hello' }] } }),
    );
    expect(victim.status).toBe(200);
    await victim.text();
    const rows = await rowsOf(database, threadId);
    expect(rows.map((row) => [row.message_id, row.role, row.status])).toEqual([
      ['u-attacker', 'user', 'completed'],
      ['a-1', 'assistant', 'completed'],
      ['u-victim', 'user', 'completed'],
      ['a-2', 'assistant', 'completed'],
    ]);
  });

  it('should not let beginAssistantMessage return a user message that holds its key', async () => {
    const { history, threadId } = await newThread(database);
    await history.appendMessage(
      threadId,
      { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
      {
        clientRequestId: 'key-1',
      },
    );
    await expect(
      history.beginAssistantMessage(threadId, { messageId: 'a-1', clientRequestId: 'key-1' }),
    ).rejects.toMatchObject({ code: 'argument-invalid', argument: 'options.clientRequestId' });
    await expect(history.beginAssistantMessage(threadId, { messageId: 'u-1' })).rejects.toMatchObject({
      code: 'argument-invalid',
      argument: 'options.messageId',
    });
  });

  it('should answer a deeply nested message with a typed 400, as a new message and as an edit, and write nothing', async () => {
    const { history, threadId } = await newThread(database);
    const { handler, prompts } = handlerFor(history);
    await (
      await handler.POST(post({ threadId, message: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }))
    ).text();
    const before = await rowsOf(database, threadId);
    // Written as text: JSON.stringify itself gives up on the deeper one. A body within the route's depth limit reaches
    // the message rules; a deeper one is refused on its text, before it is parsed.
    const expected = {
      70: { code: 'message-invalid', message: 'message: nested deeper than 64 levels.', path: 'message' },
      100_000: { code: 'argument-invalid', message: 'Invalid body "…": nested deeper than 80 levels.' },
    };
    for (const [depth, error] of Object.entries(expected)) {
      const deep = `${'{"a":'.repeat(Number(depth))}1${'}'.repeat(Number(depth))}`;
      const message = (id: string) =>
        `{"id":"${id}","role":"user","parts":[{"type":"text","text":"deep","providerMetadata":{"x":${deep}}}],"metadata":${deep}}`;
      for (const body of [
        `{"threadId":"${threadId}","message":${message('u2')}}`,
        `{"threadId":"${threadId}","messageId":"u1","message":${message('u1')}}`,
      ]) {
        const response = await handler.POST(new Request('http://localhost/api/chat', { method: 'POST', body }));
        expect(response.status).toBe(400);
        const answer = await response.text();
        expect(answer.length).toBeLessThan(500);
        expect(JSON.parse(answer)).toMatchObject({ error });
      }
    }
    expect(await rowsOf(database, threadId)).toEqual(before);
    expect(prompts()).toHaveLength(1);
  });
});

describe('the chat body limit', () => {
  const refusingHandler = (maxBodyBytes?: number) => {
    const seen: string[] = [];
    const handler = createChatHandler<ChatMessage>({
      getHistory: () => {
        seen.push('getHistory');
        throw new Response('unauthenticated', { status: 401 });
      },
      ...schemas,
      maxBodyBytes,
      model: { streamText: () => seen.push('model') as never },
    });
    return { handler, seen };
  };

  it('should refuse a declared Content-Length over the limit with 413 before reading or authenticating', async () => {
    const { handler, seen } = refusingHandler(1_000);
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(100));
      },
    });
    const request = new Request('http://localhost/api/chat', {
      method: 'POST',
      body,
      headers: { 'content-length': '5000' },
      duplex: 'half',
    } as RequestInit);
    const response = await handler.POST(request);
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe('body-too-large');
    expect(seen).toEqual([]);
    expect(pulled).toBeLessThanOrEqual(1); // a stream may pull once ahead when it is created
  });

  it('should stop reading an undeclared body at the limit: never more than the limit and one chunk held', async () => {
    const { handler, seen } = refusingHandler(10_000);
    let sent = 0;
    // An endless body: without a limit, reading it never ends.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 1_000;
        controller.enqueue(new TextEncoder().encode(' '.repeat(1_000)));
      },
    });
    const request = new Request('http://localhost/api/chat', { method: 'POST', body, duplex: 'half' } as RequestInit);
    const response = await handler.POST(request);
    expect(response.status).toBe(413);
    expect((await response.json()).error).toMatchObject({ code: 'body-too-large' });
    expect(sent).toBeLessThanOrEqual(12_000);
    expect(seen).toEqual([]);
  });

  it('should refuse a 4 MB body nested 2,000,000 deep in a field the route ignores, before parsing or authenticating', async () => {
    const { handler, seen } = refusingHandler();
    const depth = 2_000_000;
    const body = `{"threadId":"x","ignored":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const response = await handler.POST(new Request('http://localhost/api/chat', { method: 'POST', body }));
      expect(response.status).toBe(400);
      expect(parse).not.toHaveBeenCalled();
      parse.mockRestore();
      expect((await response.json()).error).toMatchObject({
        code: 'argument-invalid',
        message: 'Invalid body "…": nested deeper than 80 levels.',
      });
    } finally {
      parse.mockRestore();
    }
    expect(seen).toEqual([]);
  });

  it('should read a body nested exactly as deep as the limit, strings of brackets aside, and go on to authentication', async () => {
    const { handler, seen } = refusingHandler();
    // 80 levels: the body's object and 79 arrays; the brackets and escaped quotes inside the string do not count.
    const body = `{"threadId":"x","ignored":${'['.repeat(79)}"[[[{{\\"[["${']'.repeat(79)}}`;
    const response = await handler.POST(new Request('http://localhost/api/chat', { method: 'POST', body }));
    expect(response.status).toBe(401);
    expect(seen).toEqual(['getHistory']);
    const deeper = body.replace('"ignored":', '"ignored":[').replace(/}$/, ']}');
    expect(
      (await handler.POST(new Request('http://localhost/api/chat', { method: 'POST', body: deeper }))).status,
    ).toBe(400);
  });

  it('should read a body within the default limit (4 MiB) and go on to authentication', async () => {
    const { handler, seen } = refusingHandler();
    const response = await handler.POST(post({ threadId: 'x', padding: 'y'.repeat(3_000_000) }));
    expect(response.status).toBe(401);
    expect(seen).toEqual(['getHistory']);
  });
});
