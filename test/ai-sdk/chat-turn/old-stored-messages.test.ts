import { streamText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../../src/ai-sdk/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { newThread, post, rowsOf, schemas, scriptedModel, textStep, type ChatMessage } from '../fixtures.js';

const text = (value: string) => [{ type: 'text', text: value }];
/** An AI SDK v4 assistant message: its tool call is a `tool-invocation` part. */
const v4ToolInvocation = {
  type: 'tool-invocation',
  toolInvocation: {
    state: 'result',
    toolCallId: 'call-v4',
    toolName: 'weather',
    args: { city: 'Oslo' },
    result: { city: 'Oslo', tempC: 3 },
  },
};

describe.each(BACKENDS)('old stored messages in the chat route on %s', (backend) => {
  const database = useTestDatabase(backend);

  it("should migrate a v4 tool-invocation, leave out a message today's schemas refuse (recorded), and answer", async () => {
    const { history, threadId } = await newThread(database);
    await history.appendMessage(threadId, { id: 'u-1', role: 'user', parts: text('Weather in Oslo?') });
    await history.appendMessage(threadId, { id: 'a-1', role: 'assistant', parts: text('placeholder') });
    await database.admin.query(
      "update agent_message set parts = $1::text::json, schema_version = 1 where thread_id = $2 and message_id = 'a-1'",
      [JSON.stringify([{ type: 'step-start' }, v4ToolInvocation, { type: 'text', text: 'It is 3°C.' }]), threadId],
    );
    // Written when `createdAt` was free text; today's metadataSchema wants a date.
    await history.appendMessage(threadId, {
      id: 'u-2',
      role: 'user',
      parts: text('And tomorrow?'),
      metadata: { createdAt: 'yesterday evening' },
    });
    await history.appendMessage(threadId, { id: 'a-2', role: 'assistant', parts: text('Cold.') });

    const prompts: ModelMessage[][] = [];
    const handler = createChatHandler<ChatMessage>({
      getHistory: () => history,
      ...schemas,
      model: {
        streamText: ({ messages, abortSignal }) => {
          prompts.push(messages);
          return streamText({ model: scriptedModel([textStep('Sunny.')]), messages, abortSignal });
        },
      },
    });
    const response = await handler.POST(
      post({ threadId, message: { id: 'u-3', role: 'user', parts: text('Thanks') } }),
    );
    expect(response.status).toBe(200);
    await response.text();

    const sent = JSON.stringify(prompts[0]);
    expect(sent).toContain('"toolCallId":"call-v4"');
    expect(sent).toContain('It is 3°C.');
    expect(sent).not.toContain('And tomorrow?');
    const rows = await rowsOf(database, threadId);
    expect(rows.find((row) => row.message_id === 'u-2')).toMatchObject({
      context_state: 'excluded',
      exclusion_reason: expect.stringMatching(/^invalid-stored-message: /),
    });
    expect(rows.filter((row) => row.context_state === 'excluded').map((row) => row.message_id)).toEqual(['u-2']);
  });
});
