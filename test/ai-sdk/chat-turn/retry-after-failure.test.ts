import { streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../../src/ai-sdk/index.js';
import { fromUIMessage } from '../../../src/ai-sdk/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { newThread, post, rowsOf, schemas, scriptedModel, textStep, type ChatMessage } from '../fixtures.js';

// The stored message and the retry's are compared as JSON values, whatever the key order: jsonb gives metadata keys
// back sorted (shorter first), and a retry may carry the message serialized with its keys in another order.
const message = {
  id: 'u-1',
  role: 'user',
  metadata: { usage: { outputTokens: 1, inputTokens: 2 } },
  parts: [
    { type: 'text', text: 'Hello' },
    { type: 'data-progress', id: 'p-1', data: { percent: 50 } },
  ],
};
const reordered = {
  parts: [
    { text: 'Hello', type: 'text' },
    { data: { percent: 50 }, id: 'p-1', type: 'data-progress' },
  ],
  metadata: { usage: { inputTokens: 2, outputTokens: 1 } },
  role: 'user',
  id: 'u-1',
};

describe.each(BACKENDS)('a retried chat request on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should answer a retry whose user message the failed first attempt stored (not 409 message-id-reused)', async () => {
    const { history, threadId } = await newThread(database);
    // The first attempt stored the user message, then failed (a 503) before the answer began.
    await history.appendMessage(threadId, fromUIMessage(message as ChatMessage), { clientRequestId: 'req-1' });
    const handler = createChatHandler<ChatMessage>({
      getHistory: () => history,
      ...schemas,
      generateMessageId: () => 'a-1',
      model: {
        streamText: ({ messages, abortSignal }) =>
          streamText({ model: scriptedModel([textStep('Hi!')]), messages, abortSignal }),
      },
    });
    const retry = await handler.POST(post({ threadId, message: reordered, requestId: 'req-1' }));
    expect([retry.status, retry.status === 200 ? null : await retry.json()]).toEqual([200, null]);
    await retry.text();
    await expect
      .poll(async () => (await rowsOf(database, threadId)).map((row) => [row.message_id, row.status]))
      .toEqual([
        ['u-1', 'completed'],
        ['a-1', 'completed'],
      ]);
    // A different message under a stored id is still refused.
    await history.appendMessage(threadId, { id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'Bye' }] });
    const changed = { id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'Goodbye' }] };
    const reused = await handler.POST(post({ threadId, message: changed }));
    expect([reused.status, (await reused.json()).error.code]).toEqual([409, 'chat-message-id-reused']);
    expect(await rowsOf(database, threadId)).toHaveLength(3);
  });
});
