import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { streamText } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { createChatHandler, createContextManager } from '../../src/ai-sdk/index.js';
import { createAgentHistory } from '../../src/index.js';
import { tracer } from '../../src/telemetry/tracer.js';
import { useTestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';
import { post, rowsOf, scriptedModel, textStep } from '../ai-sdk/fixtures.js';

// No OpenTelemetry SDK is registered in this file (until the last test): the package's spans are the API's
// non-recording ones, and everything works as without tracing.
describe('without an OpenTelemetry SDK', () => {
  const database = useTestDatabase('pglite');
  afterAll(() => trace.disable());

  it('should make non-recording spans and keep no span active inside a store call', async () => {
    expect(tracer.startSpan('probe').isRecording()).toBe(false);
    const activeInside: unknown[] = [];
    const store = createAgentHistory({
      db: database.db,
      checkMessage: () => void activeInside.push(trace.getActiveSpan()),
    }).forTenant(randomUUID());
    const thread = await store.createThread();
    const { created } = await store.appendMessage(thread.id, userMessage('m-1', 'Hello'));
    expect(created).toBe(true);
    expect(activeInside).toEqual([undefined]);
    expect((await store.listMessages(thread.id)).messages.map((stored) => stored.message.id)).toEqual(['m-1']);
    await expect(store.getThread(randomUUID())).rejects.toMatchObject({ code: 'thread-not-found' });
  });

  it('should answer a chat turn through the route, with the context engine, and store it', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    const handler = createChatHandler({
      getHistory: async () => store,
      model: {
        streamText: ({ messages, abortSignal, prepareStep }) =>
          streamText({ model: scriptedModel([textStep('Hi there.')]), messages, abortSignal, prepareStep }),
      },
      contextManager: ({ history, threadId }) =>
        createContextManager({ store: history.contextStore(threadId), model: 'gpt-4o' }),
    });
    const response = await handler.POST(post({ threadId: thread.id, message: userMessage('u-1', 'Hello') }));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"delta":"there."');
    await expect
      .poll(async () => (await rowsOf(database, thread.id)).map((row) => `${row.role}:${row.status}`))
      .toEqual(['user:completed', 'assistant:completed']);
  });

  it('should start recording when the application registers an SDK after loading the package', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await store.createThread();
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['agent-history.store.createThread']);
  });
});
