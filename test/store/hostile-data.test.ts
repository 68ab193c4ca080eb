import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, DatabaseError, InvalidArgumentError } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// A second connection holding a lock is what makes a search wait here; PGlite has one connection.
describe('searchMessages statement timeout on postgres', () => {
  const database = useTestDatabase('postgres');

  it('should cancel a search that waits longer than its timeout, with a retryable DatabaseError', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({});
    await store.appendMessage(thread.id, { id: 'm-1', role: 'user', parts: [{ type: 'text', text: 'paris' }] });
    const locker = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = locker.begin(async (tx) => {
      await tx.unsafe('lock table agent_message in access exclusive mode');
      locked();
      await released;
    });
    try {
      await isLocked;
      // Without a statement timeout the search would wait for the lock as long as it is held: the test then
      // releases it after 20 s and reports the search as not cancelled.
      const outcome = await Promise.race([
        store.searchMessages('paris', { timeoutMs: 200 }).then(
          () => 'answered',
          (error: unknown) => error,
        ),
        new Promise((resolve) => setTimeout(() => resolve('not cancelled'), 20_000)),
      ]);
      expect(outcome).toBeInstanceOf(DatabaseError);
      expect(outcome).toMatchObject({ databaseCode: '57014', retryable: true });
    } finally {
      release();
      await holding;
      await locker.end();
    }
    expect((await store.searchMessages('paris')).map((hit) => hit.messageId)).toEqual(['m-1']);
    await expect(store.searchMessages('paris', { timeoutMs: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

/** `count` distinct words of about 5 characters (base 36), space-separated: the costliest text for a tsvector. */
const distinctWords = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `w${(from + index).toString(36)}`).join(' ');

describe.each(BACKENDS)('the search index of large messages on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should store a message whose words exceed the 1 MB tsvector limit, searchable by what was indexed', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({});
    // 170,000 distinct words: about 1 MB of text under the 1 MiB message limit, about 1.9 MB as a tsvector.
    const huge = distinctWords(170_000);
    expect(Buffer.byteLength(huge)).toBeLessThan(1_048_576 - 1_000);
    const { created } = await store.appendMessage(thread.id, {
      id: 'huge',
      role: 'user',
      parts: [{ type: 'text', text: `first\n${huge}\nlast` }],
    });
    expect(created).toBe(true);
    expect((await store.searchMessages('first')).map((hit) => hit.messageId)).toEqual(['huge']);
    expect((await store.searchMessages(distinctWords(1, 1_000))).map((hit) => hit.messageId)).toEqual(['huge']);
    // A message under the whole-text bound is indexed to its last word, line breaks included.
    const whole = distinctWords(40_000, 200_000);
    await store.appendMessage(thread.id, {
      id: 'whole',
      role: 'user',
      parts: [{ type: 'text', text: `${whole}\nomega` }],
    });
    expect((await store.searchMessages('omega')).map((hit) => hit.messageId)).toEqual(['whole']);
    expect((await store.searchMessages(distinctWords(1, 239_999))).map((hit) => hit.messageId)).toEqual(['whole']);
  });
});
