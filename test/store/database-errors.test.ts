import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentHistoryError, createAgentHistory, DatabaseError } from '../../src/index.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/test-database.js';

const SECRET = 'card 4111 1111 1111 1111';
const secretMessage = (id: string) => ({ id, role: 'user' as const, parts: [{ type: 'text', text: `my ${SECRET}` }] });

/** Every way an error is commonly logged: its message, `console.error`'s rendering (causes included), JSON. */
const logged = (error: unknown) => [String(error), inspect(error, { depth: 10 }), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error)].join('\n');

// A failed statement reaches the caller as a DatabaseError: Drizzle's own error lists every parameter of the
// statement, the message's parts included, and would copy them into whatever logs the error.
describe.each(BACKENDS)('database errors on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend);
  });
  afterAll(() => database.close());

  it('should raise a DatabaseError with the SQLSTATE and no parameter when a statement fails, and write nothing', async () => {
    const tenantId = randomUUID();
    const thread = await createAgentHistory({ db: database.db }).forTenant(tenantId).createThread();
    let caught: unknown;
    let drizzleError: unknown;
    await database.db
      .transaction(async (tx) => {
        // The transaction is aborted, so the next statement fails with 25P02 whatever it is.
        await tx.execute(sql`select 1 / 0`).catch(() => {});
        const store = createAgentHistory({ db: tx as never }).forTenant(tenantId);
        // What Drizzle throws for the same kind of failure: the parameters are in its message.
        drizzleError = await tx.execute(sql`select ${SECRET}::text`).catch((error: unknown) => error);
        caught = await store.appendMessage(thread.id, secretMessage('m1')).catch((error: unknown) => error);
      })
      .catch(() => {});
    expect(logged(drizzleError)).toContain(SECRET); // the leak this guards against is real

    expect(caught).toBeInstanceOf(DatabaseError);
    expect(AgentHistoryError.isInstance(caught)).toBe(true);
    const error = caught as DatabaseError;
    expect([error.code, error.databaseCode, error.retryable]).toEqual(['database-failed', '25P02', false]);
    expect(error.message).toMatch(/^The database failed \(25P02\): current transaction is aborted/);
    expect(postgresErrorCode(error)).toBe('25P02');
    expect(logged(error)).not.toContain(SECRET);
    expect(logged(error)).not.toContain('4111');
    expect(await database.admin.query('select 1 from agent_message where thread_id = $1', [thread.id])).toEqual([]);
  });

  it('should raise a DatabaseError without the parameters from the context store and from reads too', async () => {
    const tenantId = randomUUID();
    const thread = await createAgentHistory({ db: database.db }).forTenant(tenantId).createThread();
    const failures: unknown[] = [];
    await database.db
      .transaction(async (tx) => {
        await tx.execute(sql`select 1 / 0`).catch(() => {});
        const store = createAgentHistory({ db: tx as never }).forTenant(tenantId);
        failures.push(
          await store.searchMessages(SECRET).catch((error: unknown) => error),
          await store.contextStore(thread.id).searchMessages!({ query: SECRET, limit: 5 }).catch((error: unknown) => error),
          await store.listMessages(thread.id).catch((error: unknown) => error),
        );
      })
      .catch(() => {});
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(DatabaseError);
      expect((failure as DatabaseError).databaseCode).toBe('25P02');
      expect(logged(failure)).not.toContain('4111');
    }
  });

  it('should raise a retryable DatabaseError when the connection is gone', async () => {
    const closing = await openTestDatabase(backend);
    const store = createAgentHistory({ db: closing.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await closing.close();
    const error = await store.appendMessage(thread.id, secretMessage('m1')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatabaseError);
    expect(logged(error)).not.toContain('4111');
    // postgres-js names the ended pool; PGlite's "closed" error has no code.
    if (backend === 'postgres') expect([(error as DatabaseError).databaseCode, (error as DatabaseError).retryable]).toEqual(['CONNECTION_ENDED', true]);
    else expect((error as DatabaseError).message).toMatch(/closed/i);
  });

  it('should pass the package’s own errors and a failing token counter’s error through unchanged', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await expect(store.getThread(randomUUID())).rejects.toMatchObject({ code: 'thread-not-found' });
    const broken = new RangeError('the counter broke');
    const counting = createAgentHistory({ db: database.db, tokenCounter: { id: 'broken', count: () => { throw broken; } } }).forTenant(randomUUID());
    const thread = await counting.createThread();
    await expect(counting.appendMessage(thread.id, secretMessage('m1'))).rejects.toBe(broken);
  });
});
