import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgentHistory, NotFoundError, type TenantHistory } from '../../src/index.js';
import { defineAgentTables } from '../../src/schema/index.js';
import { messageColumns } from '../../src/store/row-mapping.js';
import { text } from '../support/fixtures.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { countingDatabase } from '../support/counting-database.js';

/** The function `listMessages` calls: the json one on PGlite, the typed one on a server. */
const LIST_FUNCTION: Record<string, RegExp> = {
  pglite: /agent_history_list_messages_json\(/,
  postgres: /agent_history_list_messages\(/,
};

describe.each(BACKENDS)('listMessages in one statement on %s', (backend) => {
  const database = useTestDatabase(backend);
  let tenantId: string;
  let store: TenantHistory;
  let threadId: string;

  beforeAll(async () => {
    tenantId = randomUUID();
    store = createAgentHistory({ db: database.db }).forTenant(tenantId);
    threadId = (await store.createThread()).id;
    for (let sequence = 1; sequence <= 60; sequence++) {
      await store.appendMessage(
        threadId,
        { id: `m-${sequence}`, role: sequence % 3 === 0 ? 'assistant' : 'user', parts: [text(`message ${sequence}`)] },
        { pinned: sequence % 7 === 0 },
      );
    }
    await store.excludeMessages(threadId, ['m-5', 'm-50', 'm-51'], { reason: 'superseded' });
  });

  it('should send one statement for a page, as the non-superuser login, where it sent a transaction of three', async () => {
    const { db, sent } = countingDatabase(database.db, backend);
    const counted = createAgentHistory({ db }).forTenant(tenantId);
    await counted.listMessages(threadId, { limit: 1 }); // the store's one-time row-level security check
    sent.length = 0;
    const page = await counted.listMessages(threadId, { limit: 10, before: 40 });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/agent_history_list_messages/);
    expect(page.messages.map((stored) => stored.sequence)).toEqual([39, 38, 37, 36, 35, 34, 33, 32, 31, 30]);
  });

  it('should return exactly what the transactional read returns, for any filters and page', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          limit: fc.integer({ min: 1, max: 70 }),
          before: fc.option(fc.integer({ min: 1, max: 70 }), { nil: undefined }),
          roles: fc.option(fc.subarray(['user', 'assistant', 'system'] as const, { minLength: 1 }), { nil: undefined }),
          onlyEligible: fc.option(fc.boolean(), { nil: undefined }),
        }),
        async (options) => {
          const fast = await store.listMessages(threadId, options);
          // Inside the caller's transaction the store reads the other way (its settings must be put back).
          const slow = await database.db.transaction((tx) =>
            createAgentHistory({ db: tx }).forTenant(tenantId).listMessages(threadId, options),
          );
          expect(fast).toEqual(slow);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("should answer another tenant's thread, a deleted one and a missing one as not found", async () => {
    const other = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await expect(other.listMessages(threadId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.listMessages(randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    const doomed = (await store.createThread()).id;
    await store.appendMessage(doomed, { id: 'x', role: 'user', parts: [text('x')] });
    await store.softDeleteThread(doomed);
    await expect(store.listMessages(doomed)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('should return, as json, every column the store maps and no other (a column added later must be added to the function)', async () => {
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'only', role: 'user', parts: [text('only')] });
    const mapped = Object.values(messageColumns(defineAgentTables())).map((column) => column.name);
    const [loaded] = await database.admin.query<{ data: Array<Record<string, unknown>> }>(
      `select data from agent_history_load_context_json('${tenantId}', null::text, null::text, '${thread}', 10) where kind = 'tail'`,
    );
    const [listed] = await database.admin.query<{ data: Array<Record<string, unknown>> }>(
      `select data from agent_history_list_messages_json('${tenantId}', null::text, null::text, '${thread}', null::bigint, 10, null::text[], false)`,
    );
    for (const data of [loaded!.data, listed!.data])
      expect(Object.keys(data[0]!).toSorted()).toEqual(mapped.toSorted());
  });

  it('should load and page a thread of several json chunks (100 messages each) as the transactional reads do', async () => {
    const thread = (await store.createThread()).id;
    for (let sequence = 1; sequence <= 230; sequence++) {
      await store.appendMessage(
        thread,
        { id: `k-${sequence}`, role: sequence % 2 ? 'user' : 'assistant', parts: [text(`chunk ${sequence}`)] },
        { pinned: sequence % 40 === 0 },
      );
    }
    const { db, sent } = countingDatabase(database.db, backend);
    const counted = createAgentHistory({ db }).forTenant(tenantId);
    const inTransaction = <T>(read: (store: TenantHistory) => Promise<T>) =>
      database.db.transaction((tx) => read(createAgentHistory({ db: tx }).forTenant(tenantId)));
    await counted.loadContext(thread); // the store's one-time row-level security check
    const compare = async (round: string) => {
      for (const maxTailMessages of [1, 99, 100, 101, 200, 229, 230, 2000]) {
        sent.length = 0;
        const fast = await counted.loadContext(thread, { maxTailMessages });
        expect(sent, round).toEqual([expect.stringMatching(/agent_history_load_context_json\(/)]);
        expect(fast, round).toEqual(await inTransaction((slow) => slow.loadContext(thread, { maxTailMessages })));
      }
      for (const options of [{ limit: 500 }, { limit: 150 }, { limit: 150, before: 120 }, { limit: 101 }]) {
        sent.length = 0;
        const fast = await counted.listMessages(thread, options);
        expect(sent, round).toEqual([expect.stringMatching(LIST_FUNCTION[backend])]);
        expect(
          fast.messages.map((stored) => stored.sequence),
          round,
        ).toEqual(Array.from({ length: fast.messages.length }, (_, index) => (options.before ?? 231) - 1 - index));
        expect(fast, round).toEqual(await inTransaction((slow) => slow.listMessages(thread, options)));
      }
    };
    await compare('no snapshot');
    await store.writeSnapshot(thread, {
      expectedVersion: 0,
      throughSequence: 205,
      summaryId: null,
      includedSequences: [],
      policyVersion: 'p',
      messagesHash: 'h',
    });
    await compare('snapshot through 205');
  });
  it('should return every column the store maps, and no other (a column added later must be added to the function)', async () => {
    const [row] = await database.admin.query<{ names: string[]; modes: string[] }>(
      `select proargnames as names, proargmodes::text[] as modes from pg_proc where proname = 'agent_history_list_messages'`,
    );
    const returned = row!.names.filter((_name, index) => row!.modes[index] === 't');
    const mapped = Object.values(messageColumns(defineAgentTables())).map((column) => column.name);
    expect(returned.toSorted()).toEqual(mapped.toSorted());
  });

  it('should read the page as json on PGlite and as typed columns on a server, equal to the transactional read', async () => {
    const before = await database.db.transaction((tx) =>
      createAgentHistory({ db: tx })
        .forTenant(tenantId)
        .listMessages(threadId, { limit: 20, roles: ['user'] }),
    );
    const json = countingDatabase(database.db, backend);
    const current = createAgentHistory({ db: json.db }).forTenant(tenantId);
    expect(await current.listMessages(threadId, { limit: 20, roles: ['user'] })).toEqual(before);
    json.sent.length = 0;
    expect(await current.listMessages(threadId, { limit: 20, roles: ['user'] })).toEqual(before);
    // On a server json costs it more than it saves the client: PGlite only.
    expect(json.sent).toEqual([expect.stringMatching(LIST_FUNCTION[backend])]);
  });

  it('should load a context in one statement, equal to the transactional load, with or without a snapshot', async () => {
    const thread = (await store.createThread()).id;
    for (let sequence = 1; sequence <= 40; sequence++) {
      await store.appendMessage(
        thread,
        { id: `c-${sequence}`, role: sequence % 2 ? 'user' : 'assistant', parts: [text(`context ${sequence}`)] },
        { pinned: sequence % 9 === 0 },
      );
    }
    const { db, sent } = countingDatabase(database.db, backend);
    const counted = createAgentHistory({ db }).forTenant(tenantId);
    const slowly = (maxTailMessages: number) =>
      database.db.transaction((tx) =>
        createAgentHistory({ db: tx }).forTenant(tenantId).loadContext(thread, { maxTailMessages }),
      );
    const compare = async (maxTailMessages: number) => {
      sent.length = 0;
      const fast = await counted.loadContext(thread, { maxTailMessages });
      expect(sent).toHaveLength(1);
      expect(fast).toEqual(await slowly(maxTailMessages));
      return fast;
    };
    await counted.loadContext(thread); // the store's one-time row-level security check
    for (const max of [1, 5, 40, 41]) await compare(max);
    const first = await store.writeSummary(thread, {
      fromSequence: 1,
      throughSequence: 20,
      content: 'first half',
      tokenCount: 3,
      policyVersion: 'p',
    });
    await store.writeSummary(thread, {
      fromSequence: 1,
      throughSequence: 30,
      content: 'newer',
      tokenCount: 2,
      policyVersion: 'p',
    });
    await store.writeSnapshot(thread, {
      expectedVersion: 0,
      throughSequence: 25,
      summaryId: first.id,
      includedSequences: [9, 18],
      policyVersion: 'p',
      messagesHash: 'h',
    });
    for (const max of [1, 3, 15, 16, 100]) {
      const loaded = await compare(max);
      expect([loaded.snapshot?.throughSequence, loaded.summary?.id, loaded.currentVersion]).toEqual([25, first.id, 1]);
      expect(loaded.pinned.map((stored) => stored.sequence)).toEqual([9, 18]);
    }
    const other = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await expect(other.loadContext(thread)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('should read every part of a context from one snapshot of the database (the function is STABLE)', async () => {
    const rows = await database.admin.query<{ volatility: string }>(
      `select provolatile as volatility from pg_proc where proname = 'agent_history_load_context_json'`,
    );
    expect(rows.map((row) => row.volatility)).toEqual(['s']);
  });
});
