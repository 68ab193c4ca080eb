import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  VersionConflictError,
  withTenant,
  type TenantHistory,
} from '../../src/index.js';
import { rowsOf } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { assistantMessage, userMessage } from '../support/fixtures.js';
import { mockEmbedding } from './memory-support.js';

const APP_ROLE = 'agent_history_app';

describe.each(BACKENDS)('memory across threads on %s', (backend) => {
  const database = useTestDatabase(backend);
  const tenantId = randomUUID();
  const otherTenantId = randomUUID();
  let admin: TenantHistory;
  let alice: TenantHistory;
  let bob: TenantHistory;
  let stranger: TenantHistory;
  let first: string; // Alice's thread that states the preference
  let second: string; // Alice's new thread that asks
  let bobThread: string;
  const { model, embedder } = mockEmbedding();

  const memoryRows = (where = 'true', params: unknown[] = []) =>
    database.admin.query<Record<string, unknown>>(
      `select * from agent_memory where tenant_id = $1 and ${where} order by id`,
      [tenantId, ...params],
    );

  beforeAll(async () => {
    const history = createAgentHistory({ db: database.db });
    admin = history.forTenant(tenantId);
    alice = history.forTenant(tenantId, { userId: 'alice' });
    bob = history.forTenant(tenantId, { userId: 'bob' });
    // Another tenant with a user of the same name and the same words: never recalled for this tenant's Alice.
    stranger = history.forTenant(otherTenantId, { userId: 'alice' });
    first = (await alice.createThread({ title: 'Units' })).id;
    await alice.appendMessage(first, userMessage('u1', 'I prefer metric units'));
    await alice.appendMessage(first, assistantMessage('a1', 'Noted, I will answer in kilometres.'));
    await alice.appendMessage(first, userMessage('u2', 'The weather is sunny today'));
    second = (await alice.createThread({ title: 'Trip' })).id;
    await alice.appendMessage(second, userMessage('q1', 'what units do I like?'));
    bobThread = (await bob.createThread({ title: 'Bob' })).id;
    await bob.appendMessage(bobThread, userMessage('b1', 'I prefer imperial units, says bob'));
    const strangerThread = await stranger.createThread({ title: 'Other tenant' });
    await stranger.appendMessage(strangerThread.id, userMessage('s1', 'I prefer metric units, says the stranger'));
  });

  describe('updateWorkingMemory', () => {
    it('should create with expectedVersion 0, raise the version, and refuse a stale version writing nothing', async () => {
      expect(await alice.getWorkingMemory()).toBeNull();
      const created = await alice.updateWorkingMemory({ content: '# Alice\n- metric', expectedVersion: 0 });
      expect(created).toMatchObject({ scope: 'user', userId: 'alice', threadId: null, version: 1 });
      const updated = await alice.updateWorkingMemory({ content: '# Alice\n- metric\n- tea', expectedVersion: 1 });
      expect(updated.version).toBe(2);
      for (const expectedVersion of [0, 1, 3]) {
        const error = await alice
          .updateWorkingMemory({ content: 'stale', expectedVersion })
          .catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(VersionConflictError);
        expect(error).toMatchObject({ expectedVersion, actualVersion: 2 });
      }
      expect(await alice.getWorkingMemory()).toMatchObject({ content: '# Alice\n- metric\n- tea', version: 2 });
    });

    it('should let exactly one of two writers of the same version win', async () => {
      const { version } = (await alice.getWorkingMemory())!;
      const results = await Promise.allSettled(
        ['writer one', 'writer two'].map((content) => alice.updateWorkingMemory({ content, expectedVersion: version })),
      );
      expect(results.filter(({ status }) => status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected')!;
      expect(rejected.reason).toBeInstanceOf(VersionConflictError);
      const rows = await memoryRows(`kind = 'working' and user_id = 'alice'`);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ version: version + 1 });
      // Two first writes of a new document: one creates it, the other conflicts (no second document).
      const firsts = await Promise.allSettled(
        ['one', 'two'].map((content) => bob.updateWorkingMemory({ content, expectedVersion: 0 })),
      );
      expect(firsts.map(({ status }) => status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(await memoryRows(`kind = 'working' and user_id = 'bob'`)).toHaveLength(1);
    });

    it("should keep each user's document their own", async () => {
      expect((await bob.getWorkingMemory())!.content).not.toContain('writer');
      expect((await alice.getWorkingMemory())!.content).toMatch(/^writer/);
    });

    it('should keep a thread document per thread, and refuse another user’s thread as not found', async () => {
      const document = await alice.updateWorkingMemory({
        scope: 'thread',
        threadId: first,
        content: 'plan',
        expectedVersion: 0,
      });
      expect(document).toMatchObject({ scope: 'thread', threadId: first, userId: 'alice', version: 1 });
      expect(await alice.getWorkingMemory({ scope: 'thread', threadId: second })).toBeNull();
      expect(await admin.getWorkingMemory({ threadId: first })).toMatchObject({ content: 'plan' });
      await expect(bob.getWorkingMemory({ scope: 'thread', threadId: first })).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        bob.updateWorkingMemory({ scope: 'thread', threadId: first, content: 'forged', expectedVersion: 1 }),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(stranger.getWorkingMemory({ scope: 'thread', threadId: first })).rejects.toBeInstanceOf(
        NotFoundError,
      );
      expect(await admin.getWorkingMemory({ threadId: first })).toMatchObject({ content: 'plan', version: 1 });
    });

    it('should refuse bad input with a typed error naming it, writing nothing', async () => {
      const before = await memoryRows();
      const cases: [Promise<unknown>, string][] = [
        [alice.updateWorkingMemory({ content: 'x'.repeat(100_001), expectedVersion: 3 }), 'options.content'],
        [alice.updateWorkingMemory({ content: 'nul \u0000', expectedVersion: 3 }), 'options.content'],
        [alice.updateWorkingMemory({ content: 42 as unknown as string, expectedVersion: 3 }), 'options.content'],
        [alice.updateWorkingMemory({ content: 'x', expectedVersion: -1 }), 'options.expectedVersion'],
        [alice.updateWorkingMemory({ content: 'x', expectedVersion: 1.5 }), 'options.expectedVersion'],
        [admin.updateWorkingMemory({ scope: 'user', content: 'x', expectedVersion: 0 }), 'options.scope'],
        [admin.getWorkingMemory(), 'options.threadId'],
        [alice.getWorkingMemory({ scope: 'tenant' as 'user' }), 'options.scope'],
      ];
      for (const [call, argument] of cases) {
        const error = await call.catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error).toMatchObject({ argument });
      }
      expect(await memoryRows()).toEqual(before);
    });
  });

  describe('recallMessages', () => {
    it('should find the preference of another thread by full-text, with its source ids and version', async () => {
      const hits = await alice.recallMessages({ query: 'what units do I like?', threadId: second, limit: 3 });
      const [u1] = await database.admin.query<{ id: string }>(
        `select id from agent_message where tenant_id = $1 and thread_id = $2 and message_id = 'u1'`,
        [tenantId, first],
      );
      expect(hits[0]).toEqual({
        id: `message:${u1!.id}`,
        sourceThreadId: first,
        sourceMessageId: u1!.id,
        sourceSequence: 1,
        sourceContentVersion: 1,
        role: 'user',
        text: 'I prefer metric units',
        score: 1 / 61,
        via: 'full-text',
      });
      // Never Bob's message nor the other tenant's, though they share the words; never the asking thread's own.
      expect(hits.map((hit) => hit.text).join('\n')).not.toMatch(/bob|stranger|what units/);
    });

    it('should find it by vector and by both once embedded, fused by reciprocal rank', async () => {
      const result = await alice.embedPendingMemory({ embedder, batchSize: 2 });
      // Alice's 4 messages only: the store is scoped to her.
      expect(result).toEqual({ embedded: 4, skipped: 0, pending: false });
      expect(model.doEmbedCalls.map((call) => call.values.length)).toEqual([2, 2]);
      expect(await alice.embedPendingMemory({ embedder })).toEqual({ embedded: 0, skipped: 0, pending: false });
      const both = await alice.recallMessages({ query: 'what units do I like?', threadId: second, limit: 1, embedder });
      expect(both).toMatchObject([{ text: 'I prefer metric units', via: 'both', score: 2 / 61 }]);
      expect(both[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
      // No shared word: only the embedding finds it.
      const vector = await alice.recallMessages({
        query: 'which measurement system?',
        threadId: second,
        limit: 1,
        embedder,
      });
      expect(vector).toMatchObject([{ text: 'I prefer metric units', via: 'vector' }]);
      expect(await alice.recallMessages({ query: 'which measurement system?', threadId: second })).toEqual([]);
      // Bob's entries, embedded tenant-wide, are never Alice's.
      await admin.embedPendingMemory({ embedder });
      const again = await alice.recallMessages({
        query: 'I prefer imperial units',
        threadId: second,
        limit: 10,
        embedder,
      });
      expect(again.map((hit) => hit.text).join('\n')).not.toMatch(/bob|stranger/);
      expect(again.every((hit) => hit.sourceThreadId === first)).toBe(true);
    });

    it('should refuse another user’s or tenant’s thread as not found, and bad input by name', async () => {
      await expect(bob.recallMessages({ query: 'units', threadId: first })).rejects.toBeInstanceOf(NotFoundError);
      await expect(stranger.recallMessages({ query: 'units', threadId: first })).rejects.toBeInstanceOf(NotFoundError);
      await expect(alice.recallMessages({ query: 'units', threadId: 'forged' })).rejects.toBeInstanceOf(NotFoundError);
      for (const [options, argument] of [
        [{ query: 3, threadId: second }, 'options.query'],
        [{ query: 'x', threadId: second, limit: 51 }, 'options.limit'],
        [{ query: 'x', threadId: second, embedder: { embed: () => [] } }, 'options.embedder'],
      ] as const)
        await expect(alice.recallMessages(options as never)).rejects.toMatchObject({ argument });
      // A huge query is cut, not refused.
      const hits = await alice.recallMessages({ query: `units ${'z'.repeat(1_000_000)}`, threadId: second });
      expect(hits[0]!.text).toBe('I prefer metric units');
    });

    it('should refuse an embedder whose vectors do not fit, writing nothing', async () => {
      const before = await memoryRows();
      const broken = { modelId: 'broken', embed: async (texts: string[]) => texts.map(() => [Number.NaN]) };
      await expect(admin.embedPendingMemory({ embedder: broken })).rejects.toMatchObject({ argument: 'embedder' });
      expect(await memoryRows()).toEqual(before);
    });
  });

  describe('row-level security as the application role, under attack', () => {
    it('should show Bob none of Alice’s memory and refuse rows that claim her', async () => {
      const asBob = <RESULT>(work: Parameters<typeof withTenant<RESULT>>[2]) =>
        withTenant(database.db, { tenantId, userId: 'bob', role: APP_ROLE }, work);
      const visible = await asBob(async (tx) =>
        rowsOf<{ user_id: string }>(
          await tx.execute(sql`select user_id from agent_memory where tenant_id = ${tenantId}`),
        ),
      );
      expect(new Set(visible.map((row) => row.user_id))).toEqual(new Set(['bob']));
      await expect(
        asBob((tx) =>
          tx.execute(
            sql`insert into agent_memory (tenant_id, user_id, scope, kind, content) values (${tenantId}, 'alice', 'user', 'fact', 'forged')`,
          ),
        ),
      ).rejects.toThrow();
      const changed = await asBob(async (tx) =>
        rowsOf(
          await tx.execute(
            sql`update agent_memory set content = 'forged' where tenant_id = ${tenantId} and user_id = 'alice' returning id`,
          ),
        ),
      );
      expect(changed).toEqual([]);
      const otherTenant = await withTenant(database.db, { tenantId: otherTenantId, role: APP_ROLE }, async (tx) =>
        rowsOf<{ tenant_id: string }>(
          await tx.execute(sql`select tenant_id from agent_memory where tenant_id = ${tenantId}`),
        ),
      );
      expect(otherTenant).toEqual([]);
      expect(await memoryRows(`content = 'forged'`)).toEqual([]);
    });
  });

  describe('redaction and deletion', () => {
    it('should delete the recall entries of a redacted message in the same transaction, and scrub the documents', async () => {
      const thread = (await alice.createThread({ title: 'Secret' })).id;
      await alice.appendMessage(thread, userMessage('s1', 'my locker code is 4471-KILO, units metric'));
      await alice.embedPendingMemory({ embedder });
      await alice.updateWorkingMemory({
        content: 'locker 4471-KILO',
        expectedVersion: (await alice.getWorkingMemory())!.version,
      });
      expect(await memoryRows(`content like '%4471-KILO%'`)).toHaveLength(2);
      await alice.redactMessage(thread, 's1', { spans: ['4471-KILO'], actor: 'test', reason: 'secret' });
      expect(await memoryRows(`content like '%4471-KILO%'`)).toEqual([]);
      expect((await alice.getWorkingMemory())!.content).toBe('locker [redacted]');
      const hits = await alice.recallMessages({ query: 'locker code', threadId: second, embedder });
      expect(hits.map((hit) => hit.text).join('\n')).not.toContain('locker');
      // Redacted, it is not embedded again.
      expect(await alice.embedPendingMemory({ embedder })).toMatchObject({ embedded: 0 });
    });

    it('should delete the facts derived from a redacted message, or scrub them with spans', async () => {
      const thread = (await alice.createThread({ title: 'Facts' })).id;
      await alice.appendMessage(thread, userMessage('f1', 'my badge is B-77 and I like tea'));
      await alice.appendMessage(thread, userMessage('f2', 'my desk is D-12'));
      const [f1, f2] = await database.admin.query<{ id: string }>(
        `select id from agent_message where tenant_id = $1 and thread_id = $2 order by sequence`,
        [tenantId, thread],
      );
      // Facts an application derived from the messages (no store API writes facts yet): user-scoped, with provenance.
      for (const [source, content] of [
        [f1!.id, 'badge B-77'],
        [f2!.id, 'desk D-12'],
      ])
        await database.admin.query(
          `insert into agent_memory (tenant_id, user_id, scope, kind, content, source_thread_id, source_message_id,
             source_content_version, embedding, embedding_model)
           values ($1, 'alice', 'user', 'fact', $2, $3, $4, 1, '{1,2}', 'm')`,
          [tenantId, content, thread, source],
        );
      await alice.redactMessage(thread, 'f1', { spans: ['B-77'], actor: 'test', reason: 'badge' });
      const facts = await memoryRows(`kind = 'fact' and source_thread_id = $2`, [thread]);
      expect(facts.toSorted((a, b) => String(a.content).localeCompare(String(b.content)))).toMatchObject([
        { content: 'badge [redacted]', embedding: null, embedding_model: null, version: 2 },
        { content: 'desk D-12', version: 1 },
      ]);
      await alice.redactMessage(thread, 'f2', { actor: 'test', reason: 'desk' });
      expect((await memoryRows(`kind = 'fact' and source_thread_id = $2`, [thread])).map((row) => row.content)).toEqual(
        ['badge [redacted]'],
      );
    });

    it('should skip a message redacted while its batch was being embedded', async () => {
      const thread = (await alice.createThread({ title: 'Race' })).id;
      await alice.appendMessage(thread, userMessage('r1', 'the race secret is ZULU-9'));
      const racing = {
        modelId: embedder.modelId,
        embed: async (texts: string[]) => {
          await admin.redactMessage(thread, 'r1', { actor: 'test', reason: 'race' });
          return embedder.embed(texts);
        },
      };
      expect(await alice.embedPendingMemory({ embedder: racing })).toEqual({ embedded: 0, skipped: 1, pending: false });
      expect(await memoryRows(`content like '%ZULU%'`)).toEqual([]);
    });

    it('should delete a thread’s memory and its messages’ recall entries with the thread', async () => {
      const thread = (await alice.createThread({ title: 'Gone' })).id;
      await alice.appendMessage(thread, userMessage('g1', 'I like cats'));
      await alice.embedPendingMemory({ embedder });
      await alice.updateWorkingMemory({ scope: 'thread', threadId: thread, content: 'cats', expectedVersion: 0 });
      expect(await memoryRows('thread_id = $2', [thread])).toHaveLength(2);
      await alice.deleteThread(thread);
      expect(await memoryRows('thread_id = $2 or source_thread_id = $2', [thread])).toEqual([]);
    });
  });

  describe('forks', () => {
    it('should recall a message once for a fork and its original, and not into the fork that holds it', async () => {
      const fork = await alice.forkThread(first, { atSequence: 1, title: 'Units, again' });
      await alice.embedPendingMemory({ embedder });
      const fromSecond = await alice.recallMessages({ query: 'metric units', threadId: second, limit: 10, embedder });
      expect(fromSecond.filter((hit) => hit.text === 'I prefer metric units')).toHaveLength(1);
      const fromFork = await alice.recallMessages({ query: 'metric units', threadId: fork.id, limit: 10, embedder });
      expect(fromFork.map((hit) => hit.text)).not.toContain('I prefer metric units');
    });
  });

  describe('contextStore(threadId).loadMemory', () => {
    it('should return the working memory and what recall found, hybrid with an embedder', async () => {
      const hybrid = await alice.contextStore(second, { embedder }).loadMemory!({
        query: 'what units do I like?',
        limit: 2,
      });
      expect(hybrid.recall).toBe('hybrid');
      expect(hybrid.workingMemory).toMatchObject({ scope: 'user', content: 'locker [redacted]' });
      expect(hybrid.recalled[0]).toMatchObject({ text: 'I prefer metric units', via: 'both' });
      const plain = await alice.contextStore(second, { workingMemoryScope: 'thread' }).loadMemory!({
        query: 'what units do I like?',
        limit: 0,
      });
      expect(plain).toEqual({ workingMemory: null, recalled: [], recall: 'full-text' });
      expect(() => admin.contextStore(second, { workingMemoryScope: 'user' })).toThrow(InvalidArgumentError);
    });

    it('should read and write the working memory of its scope, optimistically', async () => {
      const store = alice.contextStore(second, { workingMemoryScope: 'thread' });
      expect(await store.getWorkingMemory()).toBeNull();
      const created = await store.updateWorkingMemory({ content: 'trip plan', expectedVersion: 0 });
      expect(created).toEqual({ id: expect.any(String), scope: 'thread', content: 'trip plan', version: 1 });
      await expect(store.updateWorkingMemory({ content: 'stale', expectedVersion: 0 })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
      expect(await alice.getWorkingMemory({ scope: 'thread', threadId: second })).toMatchObject({
        content: 'trip plan',
      });
      // The user's document is another one.
      expect((await alice.contextStore(second).getWorkingMemory())!.content).toBe('locker [redacted]');
    });
  });
});
