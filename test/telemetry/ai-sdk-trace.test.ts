import { randomUUID } from 'node:crypto';
import { OpenTelemetry } from '@ai-sdk/otel';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { isStepCount, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createChatHandler, createContextManager } from '../../src/ai-sdk/index.js';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import { useTestDatabase } from '../support/test-database.js';
import { postTurn, stringsOf, useInMemoryTracing } from '../support/in-memory-tracing.js';
import { userMessage } from '../support/fixtures.js';
import { post, scriptedModel, textStep } from '../ai-sdk/fixtures.js';

const tracing = useInMemoryTracing();

// What no span may carry, ours or the AI SDK's: the texts of a turn, a tool's input, the secret of a redacted
// message, the title and the user id.
const SECRET = 'PURPLE-ELEPHANT-4242';
const FIRST_TEXT = `Remember the launch code ${SECRET} and check the harbour`;
const SECOND_TEXT = 'Which colour was the elephant wearing today';
const ANSWER_TEXT = 'Noted, ZEBRA-CROSSING-77 it is.';
const HARBOUR = 'KITTIWAKE-HARBOUR';
const TITLE = 'Confidential launch planning';
const USER_ID = 'alice@example.com';

const lookupStep = (id: string) => [
  { type: 'tool-call' as const, toolCallId: id, toolName: 'lookup', input: JSON.stringify({ place: HARBOUR }) },
  {
    type: 'finish' as const,
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage: {
      inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 8, text: 8, reasoning: undefined },
    },
  },
];

/** A tool that reads the store, as an application's tool would: its store span is a child of the SDK's tool span. */
const lookupTool = (history: TenantHistory, threadId: string) =>
  tool({
    description: 'Looks a place up',
    inputSchema: z.object({ place: z.string() }),
    execute: async ({ place }) => ({ place, known: (await history.getThread(threadId)) !== null }),
  });

const parentOf = (span: ReadableSpan) =>
  tracing.spans().find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId);
const parentName = (name: string) => tracing.named(name).map((span) => parentOf(span)?.name);

describe('a chat turn traced with the AI SDK telemetry on', () => {
  const database = useTestDatabase('pglite');

  async function chat() {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId, { userId: USER_ID });
    const thread = await store.createThread({ title: TITLE });
    const tools = { lookup: lookupTool(store, thread.id) };
    tracing.reset(); // the turns' spans only
    const handler = createChatHandler({
      getHistory: async () => store,
      getUserId: async () => USER_ID,
      generateMessageId: () => `a-${randomUUID()}`,
      tools,
      model: {
        streamText: ({ messages, abortSignal, prepareStep }) =>
          streamText({
            model: scriptedModel([lookupStep(`call-${randomUUID()}`), textStep(ANSWER_TEXT)]),
            tools,
            stopWhen: isStepCount(2),
            messages,
            abortSignal,
            prepareStep,
            // The application's telemetry: the AI SDK's OpenTelemetry integration, without prompts and outputs.
            telemetry: { integrations: [new OpenTelemetry()], recordInputs: false, recordOutputs: false },
          }),
      },
      contextManager: ({ history, threadId }) =>
        createContextManager({ store: history.contextStore(threadId), model: 'gpt-4o' }),
    });
    const turn = (message: ReturnType<typeof userMessage>) =>
      postTurn(tracing, handler, post({ threadId: thread.id, message }), 'ZEBRA');
    return { store, thread, tenantId, turn };
  }

  it("should record one connected trace: the route's phases around the SDK's spans, store calls under its tool", async () => {
    const { turn } = await chat();
    await turn(userMessage('u-1', FIRST_TEXT));
    const spans = tracing.spans();
    const [root] = tracing.named('agent-history.chat.turn');
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([root!.spanContext().traceId]));
    // Connected: every span but the turn has its parent among the trace's spans.
    expect(spans.filter((span) => parentOf(span) === undefined).map((span) => span.name)).toEqual([root!.name]);
    expect(parentName('invoke_agent mock-model-id')).toEqual(['agent-history.chat.stream']);
    expect(parentName('step 1')).toEqual(['invoke_agent mock-model-id']);
    expect(parentName('step 2')).toEqual(['invoke_agent mock-model-id']);
    expect(parentName('chat mock-model-id')).toEqual(['step 1', 'step 2']);
    expect(parentName('execute_tool lookup')).toEqual(['step 1']);
    expect(parentName('agent-history.store.getThread')).toEqual(['agent-history.chat.plan', 'execute_tool lookup']);
    expect(parentName('agent-history.context.compact')).toEqual(['agent-history.chat.stream']);
    expect(parentName('agent-history.store.finalizeMessage')).toEqual(['agent-history.chat.stream']);
    const [invoke] = tracing.named('invoke_agent mock-model-id');
    expect(invoke!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 13 });
    const [compact] = tracing.named('agent-history.context.compact');
    expect(compact!.attributes).toMatchObject({
      'agent_history.context.trigger': 'initial-messages',
      'agent_history.context.messages': 1,
    });
    expect(root!.attributes['agent_history.message.status']).toBe('completed');
  });

  it("should carry no message text, tool input, redacted secret, title or id in clear in any span, the SDK's too", async () => {
    const { store, thread, tenantId, turn } = await chat();
    await turn(userMessage('u-1', FIRST_TEXT));
    await store.redactMessage(thread.id, 'u-1', { spans: [SECRET], actor: 'admin', reason: 'a secret' });
    await turn(userMessage('u-2', SECOND_TEXT));
    expect(tracing.named('invoke_agent mock-model-id')).toHaveLength(2);
    expect(tracing.named('agent-history.store.redactMessage')).toHaveLength(1);
    const strings = tracing.spans().flatMap(stringsOf);
    expect(strings.filter((text) => text.startsWith('gen_ai.')).length).toBeGreaterThan(20); // the SDK's were seen
    const forbidden = [SECRET, FIRST_TEXT, SECOND_TEXT, 'ZEBRA', 'elephant', HARBOUR, TITLE, USER_ID, 'alice'];
    for (const value of [...forbidden, thread.id, tenantId])
      expect(strings.filter((text) => text.includes(value))).toEqual([]);
  });
});
