import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Logger } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { afterEach, describe, expect, it } from 'vitest';
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
  const restore: Array<() => void> = [];
  afterEach(() => restore.splice(0).forEach((undo) => undo()));

  /**
   * The store's database, recording every statement sent: through Drizzle (its logger) and, on PGlite, straight
   * to PGlite's simple-query `exec` (the real client, recorded on its way through), which has no parameters.
   */
  const recordingDatabase = () => {
    const sent: Array<{ query: string; params: unknown[]; via: 'drizzle' | 'exec' }> = [];
    const logger: Logger = { logQuery: (query, params) => void sent.push({ query, params, via: 'drizzle' }) };
    const client = (database.db as unknown as { $client: never }).$client;
    if (backend === 'pglite') {
      const pglite = client as { exec(query: string): Promise<unknown> };
      const exec = pglite.exec;
      pglite.exec = (query: string) => {
        sent.push({ query, params: [], via: 'exec' });
        return exec.call(pglite, query);
      };
      restore.push(() => void (pglite.exec = exec));
    }
    const db = (backend === 'pglite'
      ? drizzlePglite({ client, logger })
      : drizzlePostgres({ client, logger })) as unknown as AgentHistoryDatabase;
    return { sent, db };
  };

  it('should send an append without parameters (one round trip) and store any text exactly', async () => {
    const { sent, db } = recordingDatabase();
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
        // On PGlite, in one pass through PGlite (simple query), not Drizzle's two (Parse/Describe, Bind/Execute).
        expect(appends[0]!.via).toBe(backend === 'pglite' ? 'exec' : 'drizzle');
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
    const { sent, db } = recordingDatabase();
    const store = createAgentHistory({ db }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    const texts = ['$a$', 'x$a', "it's", 'back\\slash', '$a0$$a$', '$$', 'end$'];
    await Promise.all(
      texts.map((text, index) =>
        store.appendMessage(thread, { id: `b-${index}`, role: 'user', parts: [{ type: 'text', text }] }),
      ),
    );
    const batches = sent.filter(({ query }) => /agent_history_append_messages\(/.test(query));
    expect(batches.length).toBeGreaterThan(0);
    expect(
      batches.every(({ params, via }) => params.length === 0 && via === (backend === 'pglite' ? 'exec' : 'drizzle')),
    ).toBe(true);
    const { messages } = await store.listMessages(thread);
    expect(messages.map((stored) => stored.message.parts[0]).toReversed()).toEqual(
      expect.arrayContaining(texts.map((text) => ({ type: 'text', text }))),
    );
    expect(messages).toHaveLength(texts.length);
  });

  it("should append for a user-scoped store in one statement, and never into another user's thread", async () => {
    const { sent, db } = recordingDatabase();
    const tenantId = randomUUID();
    await fc.assert(
      fc.asyncProperty(hostileText, async (suffix) => {
        const userId = `user-${suffix}`.slice(0, 200);
        const mine = createAgentHistory({ db }).forTenant(tenantId, { userId });
        const other = createAgentHistory({ db }).forTenant(tenantId, { userId: `${userId}-other` });
        const thread = (await mine.createThread()).id;
        const foreign = (await other.createThread()).id;
        sent.length = 0;
        await mine.appendMessage(thread, { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'hi' }] });
        await mine.beginAssistantMessage(thread, { messageId: 'a-1' });
        // One statement each: no transaction of the user's scope around them.
        expect(sent.map(({ query }) => query.match(/agent_history_append_message|^begin|^commit/i)?.[0])).toEqual([
          'agent_history_append_message',
          'agent_history_append_message',
        ]);
        await expect(
          mine.appendMessage(foreign, { id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'x' }] }),
        ).rejects.toMatchObject({ code: 'thread-not-found' });
        expect((await other.listMessages(foreign)).messages).toEqual([]);
        expect((await mine.getMessage(thread, 'u-1')).message.parts).toEqual([{ type: 'text', text: 'hi' }]);
      }),
      { numRuns: 15 },
    );
  });
});
