import { convertToModelMessages } from 'ai';
import { describe, expect, it } from 'vitest';
import { fromUIMessage, loadThreadPage, toUIMessage } from '../../../src/ai-sdk/index.js';
import { toUIMessages } from '../../../src/ai-sdk/ui-messages/ui-message-mapping.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { newThread, schemas, type ChatMessage } from '../fixtures.js';

const userWithEverything: ChatMessage = {
  id: 'u-rich',
  role: 'user',
  metadata: { createdAt: new Date('2026-01-02T03:04:05.678Z') },
  parts: [
    { type: 'text', text: 'Plan a trip: ünïcødé, emoji 🌍, quotes "x" and \\ backslash' },
    { type: 'file', mediaType: 'image/png', filename: 'map.png', url: 'data:image/png;base64,iVBORw0KGgo=' },
    { type: 'data-progress', id: 'p1', data: { percent: 40 } },
  ],
};

const assistantWithEverything: ChatMessage = {
  id: 'a-rich',
  role: 'assistant',
  metadata: { usage: { inputTokens: 120, outputTokens: 15, totalTokens: 135 } },
  parts: [
    { type: 'step-start' },
    { type: 'reasoning', text: 'need weather', state: 'done', providerMetadata: { openai: { itemId: 'rs_1' } } },
    {
      type: 'tool-weather',
      toolCallId: 'call-1',
      state: 'output-available',
      input: { city: 'Rome' },
      output: { city: 'Rome', tempC: 18 },
    },
    {
      type: 'tool-weather',
      toolCallId: 'call-2',
      state: 'output-error',
      input: { city: 'Atlantis' },
      errorText: 'No such city',
    },
    {
      type: 'dynamic-tool',
      toolName: 'lookup',
      toolCallId: 'call-3',
      state: 'output-available',
      input: { q: 1 },
      output: [1, null, 'two'],
    },
    { type: 'source-url', sourceId: 's1', url: 'https://example.com/rome', title: 'Rome' },
    { type: 'source-document', sourceId: 's2', mediaType: 'application/pdf', title: 'Guide' },
    { type: 'step-start' },
    { type: 'text', text: 'Rome: 18C.', state: 'done', providerMetadata: { anthropic: { cache: true } } },
  ],
};

const plain: ChatMessage = { id: 'u-plain', role: 'user', parts: [{ type: 'text', text: 'no metadata' }] };

describe('fromUIMessage / toUIMessage', () => {
  it('should map a message to the storable shape and back without adding anything', () => {
    expect(fromUIMessage(plain)).toStrictEqual(plain);
    expect(toUIMessage<ChatMessage>({ message: fromUIMessage(assistantWithEverything) })).toStrictEqual(
      assistantWithEverything,
    );
  });
});

describe.each(BACKENDS)('UIMessage round trip on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should read back exactly the same id, role, parts and metadata through the store', async () => {
    const { history, threadId } = await newThread(database);
    const messages = [
      plain,
      assistantWithEverything,
      { ...userWithEverything, metadata: { note: 'kept', nested: { list: [1, 2.5, -3e-7, true, null] } } },
    ];
    for (const message of messages) await history.appendMessage(threadId, fromUIMessage(message as ChatMessage));
    const page = await history.listMessages(threadId);
    const back = toUIMessages<ChatMessage>([...page.messages].reverse());
    expect(back).toStrictEqual(messages);
  });

  it('should give back the deprecated rawInput of an output-error part as its input, which the model is sent alike', async () => {
    const { history, threadId } = await newThread(database);
    const failedCall = {
      type: 'tool-weather',
      toolCallId: 'call-1',
      state: 'output-error',
      input: undefined,
      rawInput: '{"city": "Ro',
      errorText: 'Invalid JSON',
    };
    const written = { id: 'a-raw', role: 'assistant', parts: [failedCall] } as unknown as ChatMessage;
    await history.appendMessage(threadId, fromUIMessage(written));
    const [back] = toUIMessages<ChatMessage>((await history.listMessages(threadId)).messages);
    const { rawInput, input: _input, ...rest } = failedCall;
    expect(back!.parts).toStrictEqual([{ ...rest, input: rawInput }]);
    expect(await convertToModelMessages([back!])).toStrictEqual(await convertToModelMessages([written]));
  });

  it('should give back typed, validated messages with dates parsed by the metadata schema in loadThreadPage', async () => {
    const { history, threadId } = await newThread(database);
    for (const message of [userWithEverything, assistantWithEverything])
      await history.appendMessage(threadId, fromUIMessage(message));
    const page = await loadThreadPage<ChatMessage>({ history, threadId, ...schemas });
    expect(page.messages).toStrictEqual([userWithEverything, assistantWithEverything]);
    expect(page.messages[0]!.metadata?.createdAt).toBeInstanceOf(Date);
    expect(page.entries.map((entry) => [entry.id, entry.sequence, entry.status])).toEqual([
      ['u-rich', 1, 'completed'],
      ['a-rich', 2, 'completed'],
    ]);
    expect(page.invalid).toEqual([]);
  });

  it('should page newest first with a keyset cursor, each page oldest first, and report messages that no longer validate', async () => {
    const { history, threadId } = await newThread(database);
    for (let index = 1; index <= 5; index++) {
      await history.appendMessage(threadId, {
        id: `u-${index}`,
        role: 'user',
        parts: [{ type: 'text', text: `message ${index}` }],
      });
    }
    await history.appendMessage(threadId, {
      id: 'u-bad',
      role: 'user',
      parts: [{ type: 'data-progress', data: { percent: 'lots' } }],
    });
    const first = await loadThreadPage<ChatMessage>({ history, threadId, limit: 3, ...schemas });
    expect(first.messages.map((message) => message.id)).toEqual(['u-4', 'u-5']);
    expect(first.invalid).toEqual([
      {
        id: 'u-bad',
        sequence: 6,
        error: 'Invalid message history.parts[0].data.percent "lots": expected number, received string',
      },
    ]);
    const second = await loadThreadPage<ChatMessage>({
      history,
      threadId,
      limit: 3,
      before: first.nextCursor!,
      ...schemas,
    });
    expect(second.messages.map((message) => message.id)).toEqual(['u-1', 'u-2', 'u-3']);
    expect(second.nextCursor).toBeNull();
    const empty = await newThread(database);
    expect(await loadThreadPage({ history: empty.history, threadId: empty.threadId })).toEqual({
      messages: [],
      entries: [],
      nextCursor: null,
      invalid: [],
    });
  });
});
