// `history.withTransaction(tx)`: the store over the caller's transaction, sharing the store's options and its
// start-up check. Once the store itself has passed the check (one catalog query, about 3 ms), its transactions skip
// it, where `createAgentHistory({ db: tx })` checks in every one; a check that did not pass, or passed only on a
// transaction (which may run as another role), is never skipped; a transaction's messages stay out of the shared
// message cache, so content it rolls back never reaches a later request; and the calls commit and roll back with
// the caller's transaction.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  createContextMessageCache,
  RowLevelSecurityBypassError,
  type TenantHistory,
} from '../../src/index.js';
import { createContextManager } from '../../src/ai-sdk/index.js';
import { rowsOf, type AgentHistoryDatabase } from '../../src/tenant/database.js';
import { text } from '../support/fixtures.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { countingDatabase } from '../support/counting-database.js';

/** The start-up check's catalog query among the statements sent. */
const setupChecks = (sent: string[]) => sent.filter((statement) => statement.includes('rolbypassrls')).length;

class Rollback extends Error {}

describe.each(BACKENDS)('withTransaction on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should check the database once for the store and all of its transactions', async () => {
    const { db, sent } = countingDatabase(database.db, backend);
    const history = createAgentHistory({ db });
    const tenantId = randomUUID();
    const thread = await history.forTenant(tenantId).createThread();
    expect(setupChecks(sent)).toBe(1);
    for (let index = 0; index < 3; index++) {
      await db.transaction(async (tx) => {
        const store = history.withTransaction(tx).forTenant(tenantId);
        await store.appendMessage(thread.id, { id: `m-${index}`, role: 'user', parts: [text(`hello ${index}`)] });
        await store.listMessages(thread.id);
      });
    }
    expect(setupChecks(sent)).toBe(1);
    // What it replaces: a store made on each transaction checks the database in each one.
    for (let index = 0; index < 2; index++) {
      await db.transaction(async (tx) => {
        await createAgentHistory({ db: tx }).forTenant(tenantId).listMessages(thread.id);
      });
    }
    expect(setupChecks(sent)).toBe(3);
    const page = await history.forTenant(tenantId).listMessages(thread.id);
    expect(page.messages.map((stored) => stored.message.id)).toEqual(['m-2', 'm-1', 'm-0']);
  });

  it('should check on each transaction until the store itself has checked, then on none', async () => {
    const { db, sent } = countingDatabase(database.db, backend);
    const history = createAgentHistory({ db });
    const tenantId = randomUUID();
    // On PGlite (one connection) a check sent through `db` while the transaction holds it would never run.
    const threadId = await db.transaction(
      async (tx) => (await history.withTransaction(tx).forTenant(tenantId).createThread()).id,
    );
    expect(setupChecks(sent)).toBe(1);
    // A transaction's pass does not count for the store: the next transaction checks again.
    await db.transaction(async (tx) => {
      const store = history.withTransaction(tx).forTenant(tenantId);
      await store.getThread(threadId);
      await store.listMessages(threadId);
    });
    expect(setupChecks(sent)).toBe(2);
    await history.ready();
    expect(setupChecks(sent)).toBe(3);
    await db.transaction(async (tx) => {
      await history.withTransaction(tx).forTenant(tenantId).getThread(threadId);
    });
    await history.forTenant(tenantId).getThread(threadId);
    expect(setupChecks(sent)).toBe(3);
  });

  it.each([
    ['history.withTransaction(tx)', 'derived'],
    ['createAgentHistory({ db: tx }) with the shared cache', 'own'],
  ])(
    'should keep what a transaction rolls back out of the messages the next requests send the model: %s',
    async (_, way) => {
      const contextCache = createContextMessageCache();
      const history = createAgentHistory({ db: database.db, contextCache });
      const inTransaction = (tx: AgentHistoryDatabase) =>
        way === 'derived' ? history.withTransaction(tx) : createAgentHistory({ db: tx, contextCache });
      const tenantId = randomUUID();
      const store = history.forTenant(tenantId);
      const threadId = (await store.createThread()).id;
      await store.appendMessage(threadId, { id: 'u1', role: 'user', parts: [text('Transfer to which account?')] });
      await store.beginAssistantMessage(threadId, { messageId: 'a1' });
      const modelSees = async (tenantStore: TenantHistory) =>
        JSON.stringify(
          await createContextManager({
            store: tenantStore.contextStore(threadId),
            model: 'openai:gpt-4o',
            tokenCounter: await history.tokenCounter,
          }).initialMessages(),
        );
      await expect(
        database.db.transaction(async (tx) => {
          const inTx = inTransaction(tx).forTenant(tenantId);
          await inTx.finalizeMessage(threadId, 'a1', { status: 'completed', parts: [text('Account 1111')] });
          expect(await modelSees(inTx)).toContain('Account 1111');
          throw new Rollback();
        }),
      ).rejects.toBeInstanceOf(Rollback);
      // The committed answer gets the content version the rolled-back one had.
      await store.finalizeMessage(threadId, 'a1', { status: 'completed', parts: [text('Account 2222')] });
      const seen = await modelSees(store);
      expect(seen).toContain('Account 2222');
      expect(seen).not.toContain('Account 1111');
    },
  );

  it("should commit and roll back with the caller's transaction", async () => {
    const history = createAgentHistory({ db: database.db });
    const store = history.forTenant(randomUUID());
    const thread = await store.createThread();
    await expect(
      database.db.transaction(async (tx) => {
        const inTx = history.withTransaction(tx).forTenant(store.tenantId);
        await inTx.appendMessage(thread.id, { id: 'rolled-back', role: 'user', parts: [text('gone')] });
        await inTx.createThread({ title: 'rolled back too' });
        expect((await inTx.listMessages(thread.id)).messages).toHaveLength(1);
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    expect((await store.listMessages(thread.id)).messages).toEqual([]);
    expect((await store.listThreads()).threads.map((listed) => listed.id)).toEqual([thread.id]);
    await database.db.transaction(async (tx) => {
      const settings = async () =>
        rowsOf<{ tenant: string | null; role: string }>(
          await tx.execute(sql`select current_setting('app.tenant_id', true) as tenant, current_user::text as role`),
        )[0];
      const before = await settings();
      await history
        .withTransaction(tx)
        .forTenant(store.tenantId)
        .appendMessage(thread.id, { id: 'kept', role: 'user', parts: [text('kept')] });
      // The caller's next statement runs as the caller, with its settings as they were.
      expect(await settings()).toEqual(before);
      expect(before!.role).not.toBe('agent_history_app');
    });
    expect((await store.listMessages(thread.id)).messages.map((stored) => stored.message.id)).toEqual(['kept']);
  });

  it('should keep a thread gapless when transactions append to it at once and some roll back', async () => {
    const history = createAgentHistory({ db: database.db });
    const store = history.forTenant(randomUUID());
    const thread = await store.createThread();
    await history.ready();
    // Eight writers at once, each appending two messages in its own transaction; every third rolls back after both.
    const writers = Array.from({ length: 8 }, (_, writer) =>
      database.db
        .transaction(async (tx) => {
          const inTx = history.withTransaction(tx).forTenant(store.tenantId);
          for (const turn of [0, 1])
            await inTx.appendMessage(thread.id, { id: `w${writer}-${turn}`, role: 'user', parts: [text(`${writer}`)] });
          if (writer % 3 === 0) throw new Rollback();
        })
        .catch((error: unknown) => {
          if (!(error instanceof Rollback)) throw error;
        }),
    );
    await Promise.all(writers);
    const { messages } = await store.listMessages(thread.id, { limit: 100 });
    const kept = [1, 2, 4, 5, 7].flatMap((writer) => [`w${writer}-0`, `w${writer}-1`]);
    expect(messages.map((stored) => stored.message.id).sort()).toEqual(kept.sort());
    expect(messages.map((stored) => stored.sequence).reverse()).toEqual(kept.map((_, index) => index + 1));
    // Each writer's two messages stay together: a transaction holds the thread's sequence until it ends.
    const order = messages.map((stored) => stored.message.id).reverse();
    for (let index = 0; index < order.length; index += 2)
      expect(order[index + 1]).toBe(order[index]!.replace(/-0$/, '-1'));
    expect((await store.getThread(thread.id)).messageCount).toBe(kept.length);
  });

  it("should keep another tenant's rows out of a transaction's store", async () => {
    const history = createAgentHistory({ db: database.db });
    const owner = history.forTenant(randomUUID());
    const thread = await owner.createThread();
    await owner.appendMessage(thread.id, { id: 'secret', role: 'user', parts: [text('secret')] });
    await database.db.transaction(async (tx) => {
      const other = history.withTransaction(tx).forTenant(randomUUID());
      await expect(other.listMessages(thread.id)).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  it('should refuse anything but a Drizzle transaction, naming tx', async () => {
    const history = createAgentHistory({ db: database.db });
    const client = (database.db as unknown as { $client: unknown }).$client;
    // A copy of a transaction (its own properties, not its class) is not one either.
    const copies = await database.db.transaction(async (tx) => [{ ...tx }, Object.assign(Object.create(null), tx)]);
    for (const [index, candidate] of [database.db, client, {}, null, undefined, 'tx', ...copies].entries()) {
      let refused: unknown;
      try {
        history.withTransaction(candidate as never);
      } catch (error) {
        refused = error;
      }
      expect(refused, `candidate ${index}`).toBeInstanceOf(InvalidArgumentError);
      expect((refused as InvalidArgumentError).argument).toBe('tx');
    }
  });
});

describe('withTransaction when the check does not pass', () => {
  const database = useTestDatabase('pglite');

  it("should never count a transaction's pass for the store", async () => {
    // PGlite's login is a superuser: without an application role, row-level security would not hold for it. A
    // transaction that runs as another role passes; the store itself must still refuse.
    const history = createAgentHistory({ db: database.db, appRole: null });
    const tenantId = randomUUID();
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local role agent_history_app`);
      await history.withTransaction(tx).forTenant(tenantId).listThreads();
    });
    await expect(history.ready()).rejects.toBeInstanceOf(RowLevelSecurityBypassError);
    await expect(history.forTenant(tenantId).createThread()).rejects.toBeInstanceOf(RowLevelSecurityBypassError);
    // Nor a pass of the store for a transaction that runs as the superuser again.
    await database.db.transaction(async (tx) => {
      await expect(history.withTransaction(tx).forTenant(tenantId).createThread()).rejects.toBeInstanceOf(
        RowLevelSecurityBypassError,
      );
    });
  });

  it("should warn once for the store and all of its transactions with rowLevelSecurityCheck 'warn'", async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const history = createAgentHistory({ db: database.db, appRole: null, rowLevelSecurityCheck: 'warn' });
      const tenantId = randomUUID();
      await database.db.transaction(async (tx) => {
        await Promise.all([1, 2, 3].map(async () => history.withTransaction(tx).forTenant(tenantId).listThreads()));
      });
      await history.forTenant(tenantId).listThreads();
      await database.db.transaction(async (tx) => history.withTransaction(tx).forTenant(tenantId).listThreads());
      expect(warn.mock.calls.filter(([message]) => /row-level security/i.test(String(message)))).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });

  it('should refuse in every transaction, never skipping a check that failed', async () => {
    // PGlite's login is a superuser: without an application role, row-level security would not hold.
    const { db, sent } = countingDatabase(database.db, 'pglite');
    const history = createAgentHistory({ db, appRole: null });
    const tenantId = randomUUID();
    await expect(history.ready()).rejects.toBeInstanceOf(RowLevelSecurityBypassError);
    for (let index = 0; index < 2; index++) {
      await db.transaction(async (tx) => {
        await expect(history.withTransaction(tx).forTenant(tenantId).createThread()).rejects.toBeInstanceOf(
          RowLevelSecurityBypassError,
        );
      });
    }
    expect(setupChecks(sent)).toBe(3);
    const [row] = rowsOf<{ count: number }>(
      await database.db.execute(sql`select count(*)::int as count from agent_thread where tenant_id = ${tenantId}`),
    );
    expect(row!.count).toBe(0);
  });
});
