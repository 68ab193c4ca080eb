import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import type { StorableMessage } from '../../src/model/stored-rows.js';
import { CONTRACT_BACKENDS, useTestDatabase } from '../support/test-database.js';

// `agent_message.parts` is json: the text the store wrote, kept as it is. So a message's parts come back with their
// keys in the order the app wrote them (jsonb would give them back sorted, shorter keys first), by every read: the
// append's own answer and a retry's, the one-statement reads and the transactional ones, and a fork's copy.

/** Keys in an order that is neither alphabetical nor by length, at every depth. */
const message = (id: string): StorableMessage => ({
  id,
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    { text: `Keys as written (${id})`, type: 'text', state: 'done' },
    {
      type: 'data-weather',
      id: `w-${id}`,
      data: { zeta: 1, alpha: { yy: [{ z: 1, a: 2 }], b: null }, middle: 'x', a: true },
    },
  ],
});

/** The parts' keys in order, at every depth: what JSON.stringify prints. */
const written = (value: StorableMessage) => JSON.stringify(value.parts);
/** The parts of each message as {@link written} prints them, by message id (appends of one batch take any order). */
const byId = (messages: StorableMessage[]) =>
  [...messages].sort((a, b) => a.id.localeCompare(b.id)).map((value) => written(value));

describe.each(CONTRACT_BACKENDS)('the key order of parts on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should give a message its parts back with the keys in the order the app wrote them, on every read', async () => {
    const history = createAgentHistory({ db: database.db });
    const store = history.forTenant(randomUUID());
    const thread = await store.createThread();
    const first = message('m-1');
    const appended = await store.appendMessage(thread.id, first);
    // Concurrent appends of one tenant go as one batch statement.
    const batched = await Promise.all(['m-2', 'm-3', 'm-4'].map((id) => store.appendMessage(thread.id, message(id))));
    const retried = await store.appendMessage(thread.id, first);
    expect(retried.created).toBe(false);
    const all = [first, ...['m-2', 'm-3', 'm-4'].map(message)];

    expect(written(appended.stored.message)).toBe(written(first));
    expect(batched.map((result) => written(result.stored.message))).toEqual(all.slice(1).map(written));
    expect(written(retried.stored.message)).toBe(written(first));
    const page = await store.listMessages(thread.id);
    expect(byId(page.messages.map((stored) => stored.message))).toEqual(all.map(written));
    const context = await store.loadContext(thread.id);
    expect(byId(context.tail.map((stored) => stored.message))).toEqual(all.map(written));
    expect(written((await store.getMessage(thread.id, 'm-3')).message)).toBe(written(all[2]!));
    // In the caller's transaction the store reads with typed selects instead of the one-statement functions.
    const inTransaction = await database.db.transaction((tx) =>
      createAgentHistory({ db: tx }).forTenant(store.tenantId).listMessages(thread.id),
    );
    expect(byId(inTransaction.messages.map((stored) => stored.message))).toEqual(all.map(written));
    const fork = await store.forkThread(thread.id, { atSequence: 4 });
    const forked = await store.listMessages(fork.id);
    expect(byId(forked.messages.map((stored) => stored.message))).toEqual(all.map(written));
    // Stored as that very text.
    const rows = await database.admin.query<{ text: string }>(
      'select parts::text as text from agent_message where thread_id = $1 order by message_id',
      [thread.id],
    );
    expect(rows.map((row) => row.text)).toEqual(all.map(written));
  });
});
