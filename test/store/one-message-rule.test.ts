import { randomUUID } from 'node:crypto';
import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentHistory, InvalidMessageError } from '../../src/index.js';
import { chatMessageCheck } from '../../src/ai-sdk/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const tools = {
  weather: tool({
    inputSchema: z.object({ city: z.string() }),
    outputSchema: z.object({ tempC: z.number() }),
  }),
};
const checkMessage = chatMessageCheck({
  tools,
  metadataSchema: z.object({ model: z.string() }).optional(),
  dataSchemas: { weather: z.object({ tempC: z.number() }) },
});

describe.each(BACKENDS)('one store rule for messages on %s', (backend) => {
  const database = useTestDatabase(backend);

  const refusal = async (work: Promise<unknown>) => {
    const error = await work.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidMessageError);
    return error as InvalidMessageError;
  };

  it('should refuse on appendMessage what validateUIMessages refuses, naming the path, writing nothing', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({ userId: 'u1' });
    const bad = [
      { parts: [{ type: 'text', text: 'hi' }, { type: 'txt' }], path: 'parts[1].type' },
      {
        parts: [{ type: 'tool-weather', toolCallId: 'c1', state: 'bogus', input: {} }],
        path: 'parts[0].state',
      },
      {
        parts: [{ type: 'tool-weather', toolCallId: 'c1', state: 'output-error', input: {} }],
        path: 'parts[0].errorText',
      },
      { parts: [{ type: 'text', text: 'hi', state: 'half' }], path: 'parts[0].state' },
      { parts: [{ type: 'file', url: 'https://e.com/a.png' }], path: 'parts[0].mediaType' },
    ];
    for (const { parts, path } of bad) {
      const error = await refusal(store.appendMessage(thread.id, { id: randomUUID(), role: 'user', parts } as never));
      expect(error.path).toBe(path);
    }
    expect((await store.listMessages(thread.id)).messages).toEqual([]);
    const first = await store.appendMessage(thread.id, {
      id: 'u-1',
      role: 'user',
      parts: [{ type: 'text', text: 'ok' }],
    });
    expect(first.stored.sequence).toBe(1);
  });

  it('should refuse a bad part on checkpoint, finalize and reopen, leaving the stored message as it was', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({ userId: 'u1' });
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    const good = [{ type: 'text', text: 'Hello', state: 'streaming' }];
    await store.checkpointMessage(thread.id, 'a-1', { parts: good });
    const bogus = [{ type: 'dynamic-tool', toolCallId: 'c', state: 'output-available', input: {}, output: 1 }];
    expect((await refusal(store.checkpointMessage(thread.id, 'a-1', { parts: bogus }))).path).toBe('parts[0].toolName');
    expect(
      (await refusal(store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: [{ type: 'txt' }] }))).path,
    ).toBe('parts[0].type');
    const final = await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: good });
    const reopen = store.reopenAssistantMessage(thread.id, 'a-1', {
      expectedParts: final.message.parts,
      parts: [{ type: 'reasoning' }],
    });
    expect((await refusal(reopen)).path).toBe('parts[0].text');
    expect((await store.getMessage(thread.id, 'a-1'))?.message.parts).toEqual(good);
  });

  it("should apply the app's schemas given through chatMessageCheck on every write", async () => {
    const store = createAgentHistory({ db: database.db, checkMessage }).forTenant(randomUUID());
    const thread = await store.createThread({ userId: 'u1' });
    const user = (parts: unknown[], metadata?: unknown) =>
      store.appendMessage(thread.id, { id: randomUUID(), role: 'user', parts, metadata } as never);
    await refusal(user([{ type: 'text', text: 'hi' }], { model: 3 }));
    await refusal(user([{ type: 'data-weather', data: { tempC: 'warm' } }]));
    await refusal(user([{ type: 'data-unknown', data: {} }]));
    await user([{ type: 'data-weather', data: { tempC: 18 } }], { model: 'm' });
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    const call = { type: 'tool-weather', toolCallId: 'c1', state: 'output-available', input: { city: 'Paris' } };
    const wrongOutput = [{ ...call, output: { tempC: 'warm' } }];
    await refusal(store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: wrongOutput }));
    await refusal(
      store.checkpointMessage(thread.id, 'a-1', { parts: [{ ...call, state: 'input-available', input: {} }] }),
    );
    await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: [{ ...call, output: { tempC: 18 } }] });
    expect((await store.listMessages(thread.id)).messages.map((row) => row.sequence).sort()).toEqual([1, 2]);
  });
});
