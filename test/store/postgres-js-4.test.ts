import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, DatabaseError } from '../../src/index.js';
import { openTestDatabase, useTestDatabase } from '../support/test-database.js';

// The store reaches past Drizzle to the driver in two places: LISTEN, for the chunk log's notifications, and the
// driver's codes for a lost or ended connection. The contract suites run on postgres-js 4 (CONTRACT_BACKENDS);
// these are the two driver-facing parts they do not reach, checked on postgres-js 4 as the other suites check them
// on postgres-js 3.
describe('the store on postgres-js 4', () => {
  const database = useTestDatabase('postgres-js-4');

  it('should notify a subscriber of this message only, through the driver’s LISTEN', async () => {
    const history = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const { id: threadId } = await history.createThread();
    await history.beginAssistantMessage(threadId, { messageId: 'a-1' });
    await history.beginAssistantMessage(threadId, { messageId: 'a-2' });
    const woken: string[] = [];
    const stop = await history.subscribeStreamChunks(threadId, 'a-1', () => woken.push('a-1'));
    expect(stop).toBeTypeOf('function');
    await history.appendStreamChunks(threadId, 'a-2', { batch: 0, chunks: [{ type: 'start' }] });
    await history.appendStreamChunks(threadId, 'a-1', { batch: 0, chunks: [{ type: 'start' }] });
    await expect.poll(() => woken, { interval: 10 }).toEqual(['a-1']);
    stop!();
  });

  it('should raise a DatabaseError naming CONNECTION_ENDED, not retryable, when the pool was ended', async () => {
    const closing = await openTestDatabase('postgres-js-4');
    const store = createAgentHistory({ db: closing.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await closing.close();
    const error = await store
      .appendMessage(thread.id, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hello' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatabaseError);
    expect([(error as DatabaseError).databaseCode, (error as DatabaseError).retryable]).toEqual([
      'CONNECTION_ENDED',
      false,
    ]);
  });
});
