import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';

/** An AI SDK v4 answer, as an app that imported its old log holds it (schema_version 1), written as this text. */
const OLD_PARTS_TEXT =
  '[{"type":"tool-invocation","toolInvocation":{"state":"result","toolCallId":"old-1","toolName":"weather",' +
  '"args":{"city":"Oslo"},"result":3}},{"type":"text","text":"It is 3 degrees in Oslo."}]';

describe.each(BACKENDS)('a message stored in an older shape on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should read as today’s parts every time while the row keeps the bytes it was written with', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, userMessage('u-1', 'Weather in Oslo?'));
    await store.appendMessage(thread, { id: 'a-1', role: 'assistant', parts: [{ type: 'text', text: 'placeholder' }] });
    await database.admin.query(
      `update agent_message set parts = $1::text::json, schema_version = 1 where thread_id = $2 and message_id = 'a-1'`,
      [OLD_PARTS_TEXT, thread],
    );
    const stored = () =>
      database.admin.query<{ parts: string; schema_version: number; content_version: number }>(
        `select parts::text as parts, schema_version, content_version from agent_message
         where thread_id = $1 and message_id = 'a-1'`,
        [thread],
      );
    const [before] = await stored();

    for (let read = 0; read < 2; read++) {
      const message = await store.getMessage(thread, 'a-1');
      expect(message).toMatchObject({ schemaVersion: 2, storedSchemaVersion: 1, tokenCount: null });
      expect(message.message.parts).toEqual([
        {
          type: 'tool-weather',
          toolCallId: 'old-1',
          state: 'output-available',
          input: { city: 'Oslo' },
          output: 3,
        },
        { type: 'text', text: 'It is 3 degrees in Oslo.' },
      ]);
      const page = await store.listMessages(thread);
      expect(page.messages.find((row) => row.message.id === 'a-1')!.message.parts).toEqual(message.message.parts);
      const context = await store.loadContext(thread);
      expect(JSON.stringify(context)).toContain('"type":"tool-weather"');
    }
    // Maintenance leaves the shape as written: the recount describes the stored text, reads still convert it.
    await store.rebuildDerivedData();
    expect(await stored()).toEqual([before]);
    expect(before).toMatchObject({ parts: OLD_PARTS_TEXT, schema_version: 1 });
    expect((await store.getMessage(thread, 'a-1')).message.parts[0]).toMatchObject({ type: 'tool-weather' });
  });
});
