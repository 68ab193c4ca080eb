import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, DatabaseError, type AgentHistoryDatabase } from '../../src/index.js';
import { BACKENDS, describeOffCitus, itOffCitus, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';
import { idHash, useInMemoryTracing } from '../support/in-memory-tracing.js';

// `search: 'background'` on the databases: the store indexes what it wrote once it is idle, as the application role
// of each tenant, and `drainSearch()` does it at once. The scheduling itself: search-drain.test.ts.

/** Timer settings that never fire within a test: only `drainSearch()` indexes. */
const NEVER = { idleMs: 600_000, maxDelayMs: 600_000 };

describe.each(BACKENDS)("search: 'background' on %s", (backend) => {
  const database = useTestDatabase(backend);
  const vectors = async (tenant: string) =>
    (
      await database.admin.query<{ message_id: string; vector: string | null }>(
        `select message_id, search_vector::text as vector from agent_message where tenant_id = $1 order by sequence`,
        [tenant],
      )
    ).map((row) => [row.message_id, row.vector]);

  it('should append without a vector, then index once idle, each vector that of the parts inline', async () => {
    const tenant = randomUUID();
    // A second of quiet before the drain (50 ms by default), so that the rows are seen pending first.
    const background = createAgentHistory({
      db: database.db,
      search: 'background',
      _internal: { searchDrain: { idleMs: 1000 } },
    }).forTenant(tenant);
    const inlineTenant = randomUUID();
    const inline = createAgentHistory({ db: database.db, search: 'inline' }).forTenant(inlineTenant);
    for (const store of [inline, background]) {
      const thread = (await store.createThread()).id;
      await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('sourdough starter')] });
      await store.appendMessage(thread, { id: 'b', role: 'user', parts: [text('rye bread')] });
      await store.beginAssistantMessage(thread, { messageId: 'c' });
      await store.finalizeMessage(thread, 'c', { status: 'completed', parts: [text('feed it flour daily')] });
    }
    // Before the drain: the rows are still pending, and search finds them all the same.
    const pendingAtOnce = (await vectors(tenant)).filter(([, vector]) => vector === null).length;
    expect((await background.searchMessages('flour')).map((hit) => hit.messageId)).toEqual(['c']);
    await expect.poll(async () => vectors(tenant)).toEqual(await vectors(inlineTenant));
    expect((await vectors(tenant)).every(([, vector]) => vector !== null)).toBe(true);
    expect(pendingAtOnce).toBeGreaterThan(0);
  });

  it('should index at drainSearch() every pending message of the tenants it wrote to, also those of another store', async () => {
    const history = createAgentHistory({ db: database.db, search: 'background', _internal: { searchDrain: NEVER } });
    const tenant = randomUUID();
    const untouched = randomUUID();
    const store = history.forTenant(tenant);
    const deferred = createAgentHistory({ db: database.db, search: 'deferred' });
    const thread = (await store.createThread()).id;
    await deferred.forTenant(tenant).appendMessage(thread, { id: 'other', role: 'user', parts: [text('from a job')] });
    const otherThread = (await deferred.forTenant(untouched).createThread()).id;
    await deferred.forTenant(untouched).appendMessage(otherThread, { id: 'x', role: 'user', parts: [text('apart')] });
    for (let index = 0; index < 3; index++)
      await store.appendMessage(thread, { id: `m${index}`, role: 'user', parts: [text(`word${index}`)] });
    expect((await vectors(tenant)).filter(([, vector]) => vector === null)).toHaveLength(4);
    await history.drainSearch();
    expect((await vectors(tenant)).filter(([, vector]) => vector === null)).toEqual([]);
    // A tenant the store never wrote to is not its to index.
    expect(await vectors(untouched)).toEqual([['x', null]]);
    await history.drainSearch(); // nothing noted: resolves at once
  });

  it('should index the writes of a user-scoped store, as the whole tenant, and never another tenant', async () => {
    const history = createAgentHistory({ db: database.db, search: 'background', _internal: { searchDrain: NEVER } });
    const tenant = randomUUID();
    const mine = history.forTenant(tenant, { userId: 'u1' });
    const thread = (await mine.createThread()).id;
    await mine.appendMessage(thread, { id: 'a', role: 'user', parts: [text('only mine')] });
    const stranger = randomUUID();
    const strangerThread = (
      await createAgentHistory({ db: database.db, search: 'deferred' }).forTenant(stranger).createThread()
    ).id;
    await createAgentHistory({ db: database.db, search: 'deferred' })
      .forTenant(stranger)
      .appendMessage(strangerThread, { id: 'b', role: 'user', parts: [text('not yours')] });
    await history.drainSearch();
    expect((await vectors(tenant))[0]![1]).toContain("'mine'");
    expect(await vectors(stranger)).toEqual([['b', null]]);
  });

  // Off Citus: there one transaction cannot query placements another role modified in it (25001), as these stores do.
  itOffCitus(
    'should resolve drainSearch() at once for the other modes, and index inline in the stores of a transaction',
    async () => {
      await createAgentHistory({ db: database.db, search: 'deferred' }).drainSearch();
      const tenant = randomUUID();
      const history = createAgentHistory({ db: database.db, search: 'background', _internal: { searchDrain: NEVER } });
      const thread = (await history.forTenant(tenant).createThread()).id;
      await database.db.transaction(async (tx) => {
        const store = createAgentHistory({ db: tx as AgentHistoryDatabase, search: 'background' }).forTenant(tenant);
        await store.appendMessage(thread, { id: 'in-tx', role: 'user', parts: [text('committed together')] });
      });
      expect((await vectors(tenant))[0]![1]).toContain("'together'");
      // So does a transaction's store (withTransaction), and its drainSearch() resolves at once: on PGlite, a drain on
      // the store's connection would wait for the transaction that waits for it.
      await database.db.transaction(async (tx) => {
        const inTx = history.withTransaction(tx as AgentHistoryDatabase);
        const store = inTx.forTenant(tenant);
        await store.appendMessage(thread, { id: 'with-tx', role: 'user', parts: [text('at once indexed')] });
        await store.beginAssistantMessage(thread, { messageId: 'answer' });
        await store.finalizeMessage(thread, 'answer', { status: 'completed', parts: [text('streamed inside')] });
        await inTx.drainSearch();
      });
      expect((await vectors(tenant)).slice(1)).toEqual([
        ['with-tx', expect.stringContaining("'once'")],
        ['answer', expect.stringContaining("'streamed'")],
      ]);
    },
  );

  it('should leave a message still streaming to its finalize, then index its final parts', async () => {
    const history = createAgentHistory({ db: database.db, search: 'background', _internal: { searchDrain: NEVER } });
    const store = history.forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    await store.beginAssistantMessage(thread, { messageId: 'answer' });
    await store.checkpointMessage(thread, 'answer', { parts: [text('half a draft')] });
    await store.appendMessage(thread, { id: 'note', role: 'user', parts: [text('meanwhile')] });
    await history.drainSearch();
    // Each checkpoint writes the parts again: indexing them now would be undone by the next one.
    expect(await vectors(store.tenantId)).toEqual([
      ['answer', null],
      ['note', "'meanwhile':1"],
    ]);
    expect(await store.indexPendingMessages()).toEqual({ indexed: 0, remaining: false });
    expect((await store.searchMessages('draft')).map((hit) => hit.messageId)).toEqual(['answer']);
    await store.finalizeMessage(thread, 'answer', { status: 'completed', parts: [text('the final answer')] });
    await history.drainSearch();
    expect((await vectors(store.tenantId))[0]).toEqual(['answer', "'answer':3 'final':2 'the':1"]);
  });

  it('should index an abandoned stream once it is recovered', async () => {
    const history = createAgentHistory({
      db: database.db,
      search: 'background',
      leaseMs: 1,
      _internal: { searchDrain: NEVER },
    });
    const store = history.forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    await store.beginAssistantMessage(thread, { messageId: 'answer' });
    await store.checkpointMessage(thread, 'answer', { parts: [text('cut off mid sentence')] });
    await history.drainSearch();
    expect(await vectors(store.tenantId)).toEqual([['answer', null]]);
    await new Promise((resolve) => setTimeout(resolve, 5)); // past its lease
    await store.recoverAbandonedMessages();
    await history.drainSearch();
    expect((await vectors(store.tenantId))[0]![1]).toContain("'sentence'");
  });

  it('should index a redacted message by its redacted parts, whichever comes first', async () => {
    const history = createAgentHistory({ db: database.db, search: 'background', _internal: { searchDrain: NEVER } });
    const store = history.forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('my pin is 4821 thanks')] });
    await store.appendMessage(thread, { id: 'b', role: 'user', parts: [text('my pin is 9377 thanks')] });
    await store.redactMessage(thread, 'a', { spans: ['4821'], actor: 'test', reason: 'pii' });
    const drained = history.drainSearch();
    await store.redactMessage(thread, 'b', { spans: ['9377'], actor: 'test', reason: 'pii' });
    await drained;
    await history.drainSearch();
    const stored = (await vectors(store.tenantId)).map(([, vector]) => vector ?? '');
    expect(stored.join(' ')).not.toMatch(/4821|9377/);
    expect(await store.searchMessages('4821 or 9377')).toEqual([]);
  });

  // A store whose connection is gone when its timer fires: the failure is reported, nothing is thrown at the app
  // (vitest fails a test file on an unhandled rejection), and the rows stay pending for the next drain.
  itOffCitus('should report a drain that fails when the database is gone, and throw nothing at the app', async () => {
    if (database.appUrl === undefined) {
      // PGlite: its one connection is the test's; a failure stands in by the role's grant on the table.
      const failures: string[] = [];
      const tenant = randomUUID();
      const history = createAgentHistory({
        db: database.db,
        search: 'background',
        _internal: { searchDrain: { idleMs: 1 }, onSearchDrainError: (_error, failed) => failures.push(failed) },
      });
      const thread = (await history.forTenant(tenant).createThread()).id;
      await database.admin.query('revoke update on agent_message from agent_history_app');
      try {
        await history.forTenant(tenant).appendMessage(thread, { id: 'a', role: 'user', parts: [text('kept')] });
        await expect.poll(() => failures).toEqual([tenant]);
        // Searchable while pending; drainSearch() tries the failed tenant again, and says it failed.
        expect((await history.forTenant(tenant).searchMessages('kept')).map((hit) => hit.messageId)).toEqual(['a']);
        await expect(history.drainSearch()).rejects.toThrow(DatabaseError);
        expect(await vectors(tenant)).toEqual([['a', null]]);
      } finally {
        await database.admin.query('grant update on agent_message to agent_history_app');
      }
      await history.drainSearch();
      expect(await vectors(tenant)).toEqual([['a', "'kept':1"]]);
      return;
    }
    const client = postgres(database.appUrl, { max: 2, onnotice: () => {} });
    const failures: Array<{ error: unknown; tenantId: string }> = [];
    const history = createAgentHistory({
      db: drizzle({ client }) as unknown as AgentHistoryDatabase,
      search: 'background',
      _internal: {
        searchDrain: { idleMs: 100 },
        onSearchDrainError: (error, tenantId) => failures.push({ error, tenantId }),
      },
    });
    const tenant = randomUUID();
    const store = history.forTenant(tenant);
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('left pending')] });
    await client.end();
    await expect.poll(() => failures.map((failure) => failure.tenantId)).toEqual([tenant]);
    expect(failures[0]!.error).toBeInstanceOf(DatabaseError);
    expect(await vectors(tenant)).toEqual([['a', null]]);
  });
});

describe("search: 'background' and the app's traces", () => {
  const database = useTestDatabase('postgres');
  const tracing = useInMemoryTracing();

  // The timer is armed inside the call of whichever write came first: its batches, for every tenant, must not join
  // that request's trace.
  it("should record the drain's batches in traces of their own, not in the request whose write armed the timer", async () => {
    const history = createAgentHistory({
      db: database.db,
      search: 'background',
      _internal: { searchDrain: { idleMs: 20 } },
    });
    const tenants = [randomUUID(), randomUUID()];
    const threads = await Promise.all(
      tenants.map(async (tenant) => (await history.forTenant(tenant).createThread()).id),
    );
    const requests = await Promise.all(
      tenants.map(async (tenant, index) =>
        trace.getTracer('app').startActiveSpan(`request ${index}`, async (request) => {
          await history
            .forTenant(tenant)
            .appendMessage(threads[index]!, { id: 'm', role: 'user', parts: [text('words')] });
          request.end();
          return request.spanContext().traceId;
        }),
      ),
    );
    await expect.poll(() => tracing.named('agent-history.store.indexPendingMessages').length).toBe(2);
    const drained = tracing.named('agent-history.store.indexPendingMessages');
    expect(new Set(drained.map((span) => span.attributes['agent_history.tenant.id_hash']))).toEqual(
      new Set(tenants.map(idHash)),
    );
    for (const span of drained) {
      expect(requests).not.toContain(span.spanContext().traceId);
      expect(span.parentSpanContext?.spanId).toBeUndefined();
    }
  });
});

// A row another transaction holds is skipped by the indexer (it never waits on the app's writers), and that
// transaction may commit it still without a vector: the indexer says so, and the store comes back for it.
describeOffCitus('search indexing and rows another transaction holds, on postgres', () => {
  const database = useTestDatabase('postgres');

  it('should report a held row as remaining, and drainSearch() should wait for it and index it', async () => {
    const history = createAgentHistory({ db: database.db, search: 'background', _internal: { searchDrain: NEVER } });
    const store = history.forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    for (const id of ['a', 'b', 'c'])
      await store.appendMessage(thread, { id, role: 'user', parts: [text(`word ${id}`)] });
    const admin = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = admin.begin(async (tx) => {
      await tx`select 1 from agent_message where tenant_id = ${store.tenantId} and message_id = 'b' for update`;
      locked();
      await released;
    });
    try {
      await isLocked;
      expect(await store.indexPendingMessages()).toEqual({ indexed: 2, remaining: true });
      expect(await store.indexPendingMessages()).toEqual({ indexed: 0, remaining: true });
      setTimeout(release, 100);
      await history.drainSearch();
    } finally {
      release();
      await holder;
      await admin.end();
    }
    expect((await vectors(store.tenantId)).filter(([, vector]) => vector === null)).toEqual([]);
  });

  const vectors = async (tenant: string) =>
    (
      await database.admin.query<{ message_id: string; vector: string | null }>(
        `select message_id, search_vector::text as vector from agent_message where tenant_id = $1 order by sequence`,
        [tenant],
      )
    ).map((row) => [row.message_id, row.vector]);
});
