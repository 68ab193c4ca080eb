import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Logger } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

/** Text that tries to end a dollar-quoted literal early, or be read as an escape, a quote or a parameter. */
const hostileText = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1 }),
  fc
    .array(fc.constantFrom('$', 'a', '0', '1', "'", '\\', '"', '$a$', '$a', '$a0$', '$1', '--', ';', '\n', 'é', '😀'), {
      minLength: 1,
      maxLength: 12,
    })
    .map((pieces) => pieces.join('')),
);

describe.each(BACKENDS)('appends sent as literals on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should send an append without parameters (one round trip) and store any text exactly', async () => {
    const sent: Array<{ query: string; params: unknown[] }> = [];
    const logger: Logger = { logQuery: (query, params) => void sent.push({ query, params }) };
    const client = (database.db as unknown as { $client: never }).$client;
    const db = (backend === 'pglite'
      ? drizzlePglite({ client, logger })
      : drizzlePostgres({ client, logger })) as unknown as AgentHistoryDatabase;
    const store = createAgentHistory({ db, appendBatching: false }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    await fc.assert(
      fc.asyncProperty(hostileText, hostileText, hostileText, async (text, id, requestKey) => {
        const messageId = `${randomUUID()}-${id}`.slice(0, 200);
        sent.length = 0;
        const { stored } = await store.appendMessage(
          thread,
          { id: messageId, role: 'user', parts: [{ type: 'text', text }], metadata: { note: text } },
          { clientRequestId: `${randomUUID()}-${requestKey}`.slice(0, 200) },
        );
        const appends = sent.filter(({ query }) => /agent_history_append_message/.test(query));
        expect(appends).toHaveLength(1);
        expect(appends[0]!.params).toEqual([]);
        const again = await store.getMessage(thread, messageId);
        expect(again.message).toEqual({
          id: messageId,
          role: 'user',
          parts: [{ type: 'text', text }],
          metadata: { note: text },
        });
        expect(again.clientRequestId).toBe(stored.clientRequestId);
      }),
      { numRuns: 60 },
    );
  });

  it('should send a combined batch without parameters too, every text intact', async () => {
    const sent: Array<{ query: string; params: unknown[] }> = [];
    const logger: Logger = { logQuery: (query, params) => void sent.push({ query, params }) };
    const client = (database.db as unknown as { $client: never }).$client;
    const db = (backend === 'pglite'
      ? drizzlePglite({ client, logger })
      : drizzlePostgres({ client, logger })) as unknown as AgentHistoryDatabase;
    const store = createAgentHistory({ db }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    const texts = ['$a$', 'x$a', "it's", 'back\\slash', '$a0$$a$', '$$', 'end$'];
    await Promise.all(
      texts.map((text, index) =>
        store.appendMessage(thread, { id: `b-${index}`, role: 'user', parts: [{ type: 'text', text }] }),
      ),
    );
    const batches = sent.filter(({ query }) => /agent_history_append_messages\(/.test(query));
    expect(batches.every(({ params }) => params.length === 0)).toBe(true);
    const { messages } = await store.listMessages(thread);
    expect(messages.map((stored) => stored.message.parts[0]).toReversed()).toEqual(
      expect.arrayContaining(texts.map((text) => ({ type: 'text', text }))),
    );
    expect(messages).toHaveLength(texts.length);
  });
});
