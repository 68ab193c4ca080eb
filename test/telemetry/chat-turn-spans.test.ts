import { randomUUID } from 'node:crypto';
import { streamText } from 'ai';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createChatHandler, createContextManager } from '../../src/ai-sdk/index.js';
import { createAgentHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { idHash, postTurn, stringsOf, useInMemoryTracing } from '../support/in-memory-tracing.js';
import { userMessage } from '../support/fixtures.js';
import { post, scriptedModel, textStep } from '../ai-sdk/fixtures.js';

const tracing = useInMemoryTracing();

// What no span may carry: the texts of a turn, the secret of a redacted message, the title and the user id.
const SECRET = 'PURPLE-ELEPHANT-4242';
const FIRST_TEXT = `Remember the launch code ${SECRET} for later`;
const SECOND_TEXT = 'Which colour was the elephant wearing today';
const ANSWER_TEXT = 'Noted, ZEBRA-CROSSING-77 it is.';
const TITLE = 'Confidential launch planning';
const USER_ID = 'alice@example.com';

const childrenOf = (parent: ReadableSpan) =>
  tracing
    .spans()
    .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
    .map((span) => span.name);

describe.each(BACKENDS)('a chat turn traced on %s', (backend) => {
  const database = useTestDatabase(backend);

  async function chat() {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId, { userId: USER_ID });
    const thread = await store.createThread({ title: TITLE });
    tracing.reset(); // the turns' spans only
    const handler = createChatHandler({
      getHistory: async () => store,
      getUserId: async () => USER_ID,
      generateMessageId: () => `a-${randomUUID()}`,
      model: {
        streamText: ({ messages, abortSignal, prepareStep }) =>
          streamText({ model: scriptedModel([textStep(ANSWER_TEXT)]), messages, abortSignal, prepareStep }),
      },
      contextManager: ({ history, threadId }) =>
        createContextManager({ store: history.contextStore(threadId), model: 'gpt-4o' }),
    });
    const turn = (message: ReturnType<typeof userMessage>) =>
      postTurn(tracing, handler, post({ threadId: thread.id, message }), 'ZEBRA');
    return { store, thread, tenantId, turn };
  }

  it('should record the turn as one trace: its phases, the compaction and every store call under them', async () => {
    const { thread, turn } = await chat();
    await turn(userMessage('u-1', FIRST_TEXT));
    const [root] = tracing.named('agent-history.chat.turn');
    expect(root!.parentSpanContext).toBeUndefined();
    expect(new Set(tracing.spans().map((span) => span.spanContext().traceId))).toEqual(
      new Set([root!.spanContext().traceId]),
    );
    expect(root!.attributes).toEqual({
      'agent_history.chat.trigger': 'submit-message',
      'agent_history.message.status': 'completed',
    });
    expect(childrenOf(root!)).toEqual([
      'agent-history.chat.authorize',
      'agent-history.chat.plan',
      'agent-history.chat.persist',
      'agent-history.chat.stream',
    ]);
    const [plan] = tracing.named('agent-history.chat.plan');
    expect(childrenOf(plan!)).toContain('agent-history.store.appendMessage');
    const [persist] = tracing.named('agent-history.chat.persist');
    expect(childrenOf(persist!)).toEqual(
      expect.arrayContaining(['agent-history.store.startRun', 'agent-history.store.beginAssistantMessage']),
    );
    const [stream] = tracing.named('agent-history.chat.stream');
    expect(stream!.attributes['agent_history.message.status']).toBe('completed');
    expect(childrenOf(stream!)).toEqual(
      expect.arrayContaining(['agent-history.context.compact', 'agent-history.store.finalizeMessage']),
    );
    const [compact] = tracing.named('agent-history.context.compact');
    expect(childrenOf(compact!)).toContain('agent-history.context-store.loadContext');
    expect(tracing.named('agent-history.store.appendMessage')[0]!.attributes['agent_history.thread.id_hash']).toBe(
      idHash(thread.id),
    );
  });

  it('should carry no message text, no redacted secret, no title and no id in clear in any span', async () => {
    const { store, thread, tenantId, turn } = await chat();
    await turn(userMessage('u-1', FIRST_TEXT));
    await store.redactMessage(thread.id, 'u-1', { spans: [SECRET], actor: 'admin', reason: 'a secret' });
    await turn(userMessage('u-2', SECOND_TEXT));
    expect(tracing.named('agent-history.store.redactMessage')).toHaveLength(1);
    expect(tracing.named('agent-history.context.compact').length).toBeGreaterThanOrEqual(2);
    const strings = tracing.spans().flatMap(stringsOf);
    expect(strings.length).toBeGreaterThan(200); // the scan saw the attributes, not an empty list
    const forbidden = [
      SECRET,
      FIRST_TEXT,
      SECOND_TEXT,
      'ZEBRA',
      'elephant',
      TITLE,
      USER_ID,
      'alice',
      thread.id,
      tenantId,
    ];
    for (const value of forbidden) expect(strings.filter((text) => text.includes(value))).toEqual([]);
  });

  it("should record the app's refusal in authorize as the turn's error, with the response's status", async () => {
    const { thread } = await chat();
    const handler = createChatHandler({
      getHistory: async () => {
        throw new Response('no', { status: 403 });
      },
      model: { streamText: () => ({ stream: new ReadableStream() }) },
    });
    expect((await handler.POST(post({ threadId: thread.id, message: userMessage('u-1', FIRST_TEXT) }))).status).toBe(
      403,
    );
    for (const name of ['agent-history.chat.turn', 'agent-history.chat.authorize']) {
      const [span] = tracing.named(name);
      expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'response-403' });
    }
  });
});
