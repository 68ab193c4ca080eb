import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, DatabaseError, InvalidArgumentError } from '../../src/index.js';
import { useTestDatabase } from '../support/test-database.js';

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
