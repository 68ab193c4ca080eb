import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  DatabaseError,
  InvalidArgumentError,
  NotFoundError,
  type AgentHistoryDatabase,
  type TenantHistory,
} from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';

/** from, from + 1, …, through */
const ascending = (from: number, through: number) =>
  Array.from({ length: through - from + 1 }, (_, index) => from + index);

describe.each(BACKENDS)('listChatMessages on %s', (backend) => {
  const database = useTestDatabase(backend);
  let store: TenantHistory;
  let threadId: string;
  beforeAll(async () => {
    store = createAgentHistory({ db: database.db }).forTenant(randomUUID(), { userId: 'alice' });
    threadId = (await store.createThread()).id;
    for (let sequence = 1; sequence <= 120; sequence++) {
      const role = sequence % 2 === 1 ? ('user' as const) : ('assistant' as const);
      await store.appendMessage(threadId, {
        id: `m-${sequence}`,
        role,
        parts: [text(`message ${sequence}`)],
        ...(sequence % 3 === 0 ? { metadata: { n: sequence } } : {}),
      });
    }
  });

  it('should page 120 messages newest page first, each page oldest first, with no duplicate and no gap', async () => {
    const first = await store.listChatMessages(threadId);
    const second = await store.listChatMessages(threadId, { before: first.nextCursor! });
    const third = await store.listChatMessages(threadId, { before: second.nextCursor! });
    expect(first.messages.map((entry) => entry.sequence)).toEqual(ascending(71, 120));
    expect(first.nextCursor).toBe(71);
    expect(second.messages.map((entry) => entry.sequence)).toEqual(ascending(21, 70));
    expect(third.messages.map((entry) => entry.sequence)).toEqual(ascending(1, 20));
    expect(third.nextCursor).toBeNull();
    expect(third.messages[0]).toStrictEqual({
      message: { id: 'm-1', role: 'user', parts: [text('message 1')] },
      sequence: 1,
      status: 'completed',
      contextState: 'eligible',
      exclusionReason: null,
      createdAt: expect.any(Date),
    });
    expect(third.messages[2]!.message).toStrictEqual({
      id: 'm-3',
      role: 'user',
      parts: [text('message 3')],
      metadata: { n: 3 },
    });
  });

  it('should end with a null cursor when the last page is exactly full', async () => {
    const first = await store.listChatMessages(threadId, { limit: 60 });
    const second = await store.listChatMessages(threadId, { limit: 60, before: first.nextCursor! });
    expect([first.messages.length, first.nextCursor, second.messages.length, second.nextCursor]).toEqual([
      60,
      61,
      60,
      null,
    ]);
  });

  it('should leave out excluded messages only when asked, and soft-deleted ones always', async () => {
    const thread = (await store.createThread()).id;
    for (const id of ['a', 'b', 'c', 'd']) await store.appendMessage(thread, { id, role: 'user', parts: [text(id)] });
    await store.excludeMessages(thread, ['b'], { reason: 'superseded-by-edit' });
    await database.admin.query(
      `update agent_message set deleted_at = now() where thread_id = $1 and message_id = 'c'`,
      [thread],
    );
    const all = await store.listChatMessages(thread);
    expect(all.messages.map((entry) => [entry.message.id, entry.contextState, entry.exclusionReason])).toEqual([
      ['a', 'eligible', null],
      ['b', 'excluded', 'superseded-by-edit'],
      ['d', 'eligible', null],
    ]);
    const visible = await store.listChatMessages(thread, { onlyEligible: true, limit: 1 });
    expect(visible.messages.map((entry) => entry.message.id)).toEqual(['d']);
    const older = await store.listChatMessages(thread, { onlyEligible: true, before: visible.nextCursor! });
    expect([older.messages.map((entry) => entry.message.id), older.nextCursor]).toEqual([['a'], null]);
  });

  it('should give an empty page for a thread with nothing on it, before its first message too', async () => {
    const empty = (await store.createThread()).id;
    expect(await store.listChatMessages(empty)).toStrictEqual({ messages: [], nextCursor: null });
    expect(await store.listChatMessages(threadId, { before: 1 })).toStrictEqual({ messages: [], nextCursor: null });
  });

  it("should not find a missing, soft-deleted, another user's or another tenant's thread", async () => {
    const tenantId = store.tenantId;
    const deleted = (await store.createThread()).id;
    await store.appendMessage(deleted, { id: 'x', role: 'user', parts: [text('x')] });
    await store.softDeleteThread(deleted);
    const bob = createAgentHistory({ db: database.db }).forTenant(tenantId, { userId: 'bob' });
    const other = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    for (const [reader, thread] of [
      [store, randomUUID()],
      [store, deleted],
      [bob, threadId],
      [other, threadId],
    ] as const) {
      const read = reader.listChatMessages(thread);
      await expect(read).rejects.toBeInstanceOf(NotFoundError);
      await expect(read).rejects.toThrow(thread);
    }
    // The same reads in order on the same connection: each call's own tenant and user, nothing carried over.
    expect((await store.listChatMessages(threadId, { limit: 1 })).messages[0]!.sequence).toBe(120);
  });

  it('should refuse bad options with a typed error naming the value', async () => {
    for (const [options, argument, value] of [
      [{ limit: 0 }, 'options.limit', '0'],
      [{ limit: 501 }, 'options.limit', '501'],
      [{ limit: 2.5 }, 'options.limit', '2.5'],
      [{ before: 0 }, 'options.before', '0'],
      [{ before: '7' }, 'options.before', '7'],
      [{ onlyEligible: 'yes' }, 'options.onlyEligible', 'yes'],
      [{ onlyEligible: null }, 'options.onlyEligible', 'null'],
    ] as const) {
      const read = store.listChatMessages(threadId, options as never);
      await expect(read).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(read).rejects.toThrow(argument);
      await expect(read).rejects.toThrow(value);
    }
    await expect(store.listChatMessages('not-a-uuid')).rejects.toThrow(/not-a-uuid/);
  });
});

describe('listChatMessages on PostgreSQL through postgres-js', () => {
  const database = useTestDatabase('postgres');
  const clients: Array<ReturnType<typeof postgres>> = [];
  afterAll(async () => {
    for (const client of clients) await client.end();
  });
  /** A store over a pool of one connection, that connection's prepared statements, and the page reads it sent. */
  const oneConnection = (prepare: boolean) => {
    const sent: string[] = [];
    const client = postgres(database.appUrl!, {
      max: 1,
      prepare,
      onnotice: () => {},
      debug: (_connection, query) => sent.push(query),
    });
    clients.push(client);
    const history = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase });
    const prepared = async () =>
      (await client<{ statement: string }[]>`select statement from pg_prepared_statements`)
        .map((row) => row.statement)
        .filter((statement) => statement.includes('agent_history_list_chat_messages'));
    const reads = () => sent.filter((query) => query.includes('agent_history_list_chat_messages('));
    return { history, prepared, reads };
  };

  it('should send the page as a prepared statement, and as literals to a client that prepares nothing', async () => {
    const tenantId = randomUUID();
    const writer = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const thread = (await writer.createThread()).id;
    for (const id of ['one', 'two', 'three'])
      await writer.appendMessage(thread, { id, role: 'user', parts: [text(`it's ${id}`)] });
    const expected = await writer.listChatMessages(thread);
    expect(expected.messages.map((entry) => entry.message.id)).toEqual(['one', 'two', 'three']);

    const preparing = oneConnection(true);
    expect(await preparing.history.forTenant(tenantId).listChatMessages(thread)).toStrictEqual(expected);
    expect(await preparing.prepared()).toHaveLength(1);
    // Another tenant through the same prepared statement: its own (empty) view, then the thread again.
    await expect(preparing.history.forTenant(randomUUID()).listChatMessages(thread)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await preparing.history.forTenant(tenantId).listChatMessages(thread, { limit: 2 })).toStrictEqual({
      messages: expected.messages.slice(1),
      nextCursor: 2,
    });
    expect(await preparing.prepared()).toHaveLength(1);

    expect(preparing.reads().every((query) => query.includes('$4::uuid'))).toBe(true);

    // A client that prepares nothing (behind a pooler) gets literals: one round trip, where a parameterized
    // statement would take two (Parse and Describe, then Bind and Execute).
    const literal = oneConnection(false);
    expect(await literal.history.forTenant(tenantId).listChatMessages(thread)).toStrictEqual(expected);
    expect(await literal.prepared()).toEqual([]);
    expect(literal.reads()).toHaveLength(1);
    expect(literal.reads()[0]).toContain(`'${thread}'::uuid`);
    expect(literal.reads()[0]).not.toContain('$1');
  });

  it('should reject a prepared call the server refuses with a DatabaseError that names no parameter', async () => {
    const tenantId = randomUUID();
    const preparing = oneConnection(true);
    const store = preparing.history.forTenant(tenantId, { userId: 'secret-user-4111' });
    const thread = (await store.createThread()).id;
    expect(await store.listChatMessages(thread)).toStrictEqual({ messages: [], nextCursor: null });
    const signature = 'agent_history_list_chat_messages(uuid, text, text, uuid, bigint, integer, boolean)';
    await database.admin.query(`revoke execute on function ${signature} from public`);
    try {
      const failure = await store.listChatMessages(thread).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DatabaseError);
      expect((failure as DatabaseError).databaseCode).toBe('42501');
      const logged = JSON.stringify(failure, Object.getOwnPropertyNames(failure)) + String(failure);
      for (const secret of [thread, tenantId, 'secret-user-4111']) expect(logged).not.toContain(secret);
    } finally {
      await database.admin.query(`grant execute on function ${signature} to public`);
    }
    expect(await store.listChatMessages(thread)).toStrictEqual({ messages: [], nextCursor: null });
  });
});
