// `history.withTransaction(tx)`: the store over the caller's transaction, sharing the store's options and its
// start-up check. The check (one catalog query, about 3 ms) runs once for the store and all of its transactions,
// never again per transaction as `createAgentHistory({ db: tx })` does; a check that did not pass is never skipped;
// and the calls commit and roll back with the caller's transaction.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  RowLevelSecurityBypassError,
} from '../../src/index.js';
import { rowsOf } from '../../src/tenant/database.js';
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

  it("should check on the transaction itself when the store has not checked yet, once, and count it the store's", async () => {
    const { db, sent } = countingDatabase(database.db, backend);
    const history = createAgentHistory({ db });
    const tenantId = randomUUID();
    // On PGlite (one connection) a check sent through `db` while the transaction holds it would never run.
    const threadId = await db.transaction(
      async (tx) => (await history.withTransaction(tx).forTenant(tenantId).createThread()).id,
    );
    expect(setupChecks(sent)).toBe(1);
    await db.transaction(async (tx) => {
      await history.withTransaction(tx).forTenant(tenantId).getThread(threadId);
    });
    await history.ready();
    await history.forTenant(tenantId).getThread(threadId);
    expect(setupChecks(sent)).toBe(1);
  });

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
    for (const candidate of [database.db, client, {}, null, undefined, 'tx']) {
      let refused: unknown;
      try {
        history.withTransaction(candidate as never);
      } catch (error) {
        refused = error;
      }
      expect(refused, String(candidate)).toBeInstanceOf(InvalidArgumentError);
      expect((refused as InvalidArgumentError).argument).toBe('tx');
    }
  });
});

describe('withTransaction when the check does not pass', () => {
  const database = useTestDatabase('pglite');

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
