import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { offlineThreadTitle, streamChatTurn } from '../../src/ai-sdk/index.js';
import { createAgentHistory, InvalidArgumentError } from '../../src/index.js';
import { withoutTitleFrom, withoutTitleSources } from '../../src/store/generated-title.js';
import { rowsOf } from '../../src/tenant/database.js';
import { scanForResidue } from '../reliability/support/database-inspection.js';
import { schemas, scriptedModel, textStep, type ChatMessage } from '../ai-sdk/fixtures.js';
import { text } from '../support/fixtures.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// A title written from a message quotes or paraphrases it: a redaction of that message must not leave the text in
// the thread's title, nor in the title a fork copied.
describe.each(BACKENDS)('a title generated from a message on %s', (backend) => {
  const database = useTestDatabase(backend);
  const newStore = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());

  async function titledThread(secret: string) {
    const store = newStore();
    const thread = await store.createThread({ metadata: { app: 'kept' } });
    await store.appendMessage(thread.id, { id: 'u1', role: 'user', parts: [text(`my card is ${secret}`)] });
    await store.appendMessage(thread.id, { id: 'a1', role: 'assistant', parts: [text('Noted.')] });
    await store.renameThread(thread.id, { title: `Card ${secret}`, derivedFrom: ['u1', 'a1'] });
    return { store, thread };
  }

  it.each(['whole', 'spans'] as const)(
    'should be cleared in the thread and its forks by a %s redaction of its source message',
    async (mode) => {
      const secret = `Title${randomUUID().slice(0, 8)}Secret`;
      const { store, thread } = await titledThread(secret);
      const fork = await store.forkThread(thread.id, { atSequence: 2 });
      const early = await store.forkThread(thread.id, { atSequence: 1 });
      // A fork given a title of its own does not carry the generated title's sources, so it keeps its title.
      const named = await store.forkThread(thread.id, { atSequence: 2, title: 'My fork' });
      expect(named.metadata).toEqual({ app: 'kept' });
      expect((await store.getThread(fork.id)).title).toBe(`Card ${secret}`);

      await store.redactMessage(thread.id, 'u1', {
        ...(mode === 'spans' ? { spans: [secret] } : {}),
        actor: 'dpo',
        reason: 'leaked',
      });

      expect((await store.getThread(named.id)).title).toBe('My fork');
      for (const id of [thread.id, fork.id, early.id]) {
        const after = await store.getThread(id);
        expect(after.title).toBeNull();
        expect(after.metadata).toEqual({ app: 'kept' });
      }
      expect(await scanForResidue(database.admin, secret)).toEqual([]);
    },
  );

  it("should keep a title someone chose, also one that replaced a generated title, and the marker through the app's metadata", async () => {
    const secret = `Title${randomUUID().slice(0, 8)}Kept`;
    const chosen = await titledThread(secret);
    await chosen.store.renameThread(chosen.thread.id, { title: 'My card' });
    await chosen.store.redactMessage(chosen.thread.id, 'u1', { actor: 'dpo', reason: 'leaked' });
    expect((await chosen.store.getThread(chosen.thread.id)).title).toBe('My card');

    const generated = await titledThread(secret);
    // The application replaces its metadata: the store's marker stays, so the redaction still finds the title.
    await generated.store.updateThreadMetadata(generated.thread.id, { metadata: { app: 'new', agentHistory: 'x' } });
    expect((await generated.store.getThread(generated.thread.id)).metadata).toEqual({
      app: 'new',
      agentHistory: { titleFrom: ['u1', 'a1'] },
    });
    await generated.store.redactMessage(generated.thread.id, 'a1', { actor: 'dpo', reason: 'leaked' });
    expect((await generated.store.getThread(generated.thread.id)).title).toBeNull();
  });

  it('should refuse a title generated from a message redacted since its text was read, and keep the old title', async () => {
    const secret = `Title${randomUUID().slice(0, 8)}Late`;
    const store = newStore();
    const thread = await store.createThread({ title: 'before' });
    await store.appendMessage(thread.id, { id: 'u1', role: 'user', parts: [text(`my card is ${secret}`)] });
    // The title's writer read u1, then the redaction committed, then the title arrives.
    await store.redactMessage(thread.id, 'u1', { actor: 'dpo', reason: 'leaked' });
    await expect(store.renameThread(thread.id, { title: `Card ${secret}`, derivedFrom: ['u1'] })).rejects.toThrow(
      InvalidArgumentError,
    );
    expect((await store.getThread(thread.id)).title).toBe('before');
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
  });

  it('should rename and redact a thread whose own metadata holds agentHistory as an array', async () => {
    const store = newStore();
    const thread = await store.createThread({ metadata: { agentHistory: [1] } });
    await store.appendMessage(thread.id, { id: 'u1', role: 'user', parts: [text('hello')] });
    expect((await store.renameThread(thread.id, { title: 'Chosen' })).metadata).toEqual({ agentHistory: [1] });
    await store.redactMessage(thread.id, 'u1', { actor: 'dpo', reason: 'test' });
    expect((await store.getThread(thread.id)).title).toBe('Chosen');
    const generated = await store.renameThread(thread.id, { title: 'Hello', derivedFrom: ['u2'] });
    expect(generated.metadata).toEqual({ agentHistory: { titleFrom: ['u2'] } });
  });

  it.each([
    [[]],
    [['']],
    [['x'.repeat(201)]],
    [Array.from({ length: 11 }, (_, index) => `m${index}`)],
    ['u1'],
    [[1]],
    [['a\u0000b']],
    [['\ud800']],
  ])('should refuse derivedFrom %j with InvalidArgumentError and write nothing', async (derivedFrom) => {
    const store = newStore();
    const thread = await store.createThread({ title: 'before' });
    await expect(
      store.renameThread(thread.id, { title: 'after', derivedFrom: derivedFrom as string[] }),
    ).rejects.toThrow(InvalidArgumentError);
    expect((await store.getThread(thread.id)).title).toBe('before');
  });

  it('should be cleared when the chat route titled the thread from the first message, and that message is redacted', async () => {
    const secret = `Route${randomUUID().slice(0, 8)}Secret`;
    const store = newStore();
    const thread = await store.createThread({});
    const turn = await streamChatTurn<ChatMessage>({
      history: store,
      threadId: thread.id,
      message: { id: 'u-1', role: 'user', parts: [{ type: 'text', text: `Remember ${secret} for me` }] },
      generateTitle: offlineThreadTitle,
      ...schemas,
      model: { streamText: ({ messages }) => streamText({ model: scriptedModel([textStep('Done.')]), messages }) },
    });
    await turn.toResponse().text();
    expect(await turn.title).toContain(secret);

    await store.redactMessage(thread.id, 'u-1', { actor: 'dpo', reason: 'leaked' });

    expect((await store.getThread(thread.id)).title).toBeNull();
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
  });
});

describe.each(BACKENDS)("the two removals of a title's sources on %s", (backend) => {
  const database = useTestDatabase(backend);

  it('should agree: SQL on a stored row and the copy a fork makes (property)', async () => {
    const own = fc.dictionary(fc.constantFrom('titleFrom', 'other', 'x'), fc.jsonValue({ maxDepth: 1 }), {
      maxKeys: 3,
    });
    const metadata = fc.record(
      { app: fc.jsonValue({ maxDepth: 1 }), agentHistory: fc.oneof(own, fc.jsonValue({ maxDepth: 1 })) },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(metadata, async (value) => {
        const [row] = rowsOf<{ result: unknown }>(
          await database.db.execute(sql`select ${withoutTitleFrom(sql`${JSON.stringify(value)}::jsonb`)} as result`),
        );
        // Compared as JSON text, as both are stored (jsonb writes -0 as 0).
        expect(row!.result).toEqual(JSON.parse(JSON.stringify(withoutTitleSources(value))));
      }),
      { numRuns: 200 },
    );
  });
});
