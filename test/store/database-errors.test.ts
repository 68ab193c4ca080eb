import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { chatErrorResponse } from '../../src/ai-sdk/index.js';
import { asStoreError } from '../../src/store/with-store-errors.js';
import { AgentHistoryError, createAgentHistory, DatabaseError, NotFoundError } from '../../src/index.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, openTestDatabase, useTestDatabase } from '../support/test-database.js';

const SECRET = 'card 4111 1111 1111 1111';
const secretMessage = (id: string) => ({ id, role: 'user' as const, parts: [{ type: 'text', text: `my ${SECRET}` }] });

/** Every way an error is commonly logged: its message, `console.error`'s rendering (causes included), JSON. */
const logged = (error: unknown) =>
  [
    String(error),
    inspect(error, { depth: 10 }),
    inspect(error, { depth: 10, showHidden: true }),
    JSON.stringify(error),
  ].join('\n');

// A failed statement reaches the caller as a DatabaseError: Drizzle's own error lists every parameter of the
// statement, the message's parts included, and would copy them into whatever logs the error.
describe.each(BACKENDS)('database errors on %s', (backend) => {
  const database = useTestDatabase(backend);

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
          await store.contextStore(thread.id).searchMessages!({ query: SECRET, limit: 5 }).catch(
            (error: unknown) => error,
          ),
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

  it('should raise a DatabaseError when the pool was ended', async () => {
    const closing = await openTestDatabase(backend);
    const store = createAgentHistory({ db: closing.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await closing.close();
    const error = await store.appendMessage(thread.id, secretMessage('m1')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatabaseError);
    expect(logged(error)).not.toContain('4111');
    // postgres-js names the ended pool; PGlite's "closed" error has no code.
    // The application ended the pool: the same call cannot succeed on it, so not retryable.
    if (backend === 'postgres')
      expect([(error as DatabaseError).databaseCode, (error as DatabaseError).retryable]).toEqual([
        'CONNECTION_ENDED',
        false,
      ]);
    else expect((error as DatabaseError).message).toMatch(/closed/i);
  });

  it('should pass the package’s own errors and a failing token counter’s error through unchanged', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await expect(store.getThread(randomUUID())).rejects.toMatchObject({ code: 'thread-not-found' });
    const broken = new RangeError('the counter broke');
    const counting = createAgentHistory({
      db: database.db,
      tokenCounter: {
        id: 'broken',
        count: () => {
          throw broken;
        },
      },
    }).forTenant(randomUUID());
    const thread = await counting.createThread();
    await expect(counting.appendMessage(thread.id, secretMessage('m1'))).rejects.toBe(broken);
  });
});

describe('database errors, without a database', () => {
  it('should decide retryable by the code', () => {
    const retryable = (databaseCode: string | undefined) =>
      new DatabaseError({ databaseCode, name: 'Error', message: 'm' }).retryable;
    for (const code of [
      '08006',
      '57P01',
      '57P03',
      '57P05',
      '25P03',
      '57014',
      '53300',
      '40001',
      '40P01',
      '55P03',
      'CONNECTION_CLOSED',
      'ECONNRESET',
      'ECONNREFUSED',
      'CONNECT_TIMEOUT',
    ]) {
      expect([code, retryable(code)]).toEqual([code, true]);
    }
    for (const code of [
      undefined,
      '23505',
      '42883',
      '42501',
      '25P02',
      '22P02',
      'CONNECTION_ENDED',
      'CONNECTION_DESTROYED',
    ]) {
      expect([code, retryable(code)]).toEqual([code, false]);
    }
  });

  it('should recognise a failed query of a second copy of drizzle-orm by its shape, and never take its message', () => {
    // What a bundled second copy throws: not this copy's class, same shape.
    const cause = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const foreign = Object.assign(new Error(`Failed query: select f($1)\nparams: ${SECRET}`), {
      query: 'select f($1)',
      params: [SECRET],
      cause,
    });
    const error = asStoreError(foreign) as DatabaseError;
    expect(error).toBeInstanceOf(DatabaseError);
    expect([error.databaseCode, error.retryable, error.message]).toEqual([
      '57P01',
      true,
      'The database failed (57P01): terminating connection due to administrator command',
    ]);
    expect(logged(error)).not.toContain('4111');
    // Without a coded cause: a generic message, still nothing of the parameters.
    const bare = asStoreError(
      Object.assign(new Error(`Failed query: select f($1)\nparams: ${SECRET}`), { query: 'q', params: [SECRET] }),
    ) as DatabaseError;
    expect([bare.databaseCode, bare.message]).toEqual([undefined, 'The database failed: the statement failed.']);
    expect(logged(bare)).not.toContain('4111');
  });

  it('should leave errors that are not the database’s alone: a module not found, a bug, the package’s own', () => {
    const notFound = Object.assign(new Error('Cannot find package gpt-tokenizer'), { code: 'ERR_MODULE_NOT_FOUND' });
    const missingFile = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const bug = new TypeError('x is undefined');
    const own = new NotFoundError({ entity: 'thread', id: 't' });
    for (const error of [notFound, missingFile, bug, own]) expect(asStoreError(error)).toBe(error);
  });

  it('should answer a route 503 with Retry-After for a retryable DatabaseError, 500 for another, logging no content', async () => {
    const logs: unknown[][] = [];
    const log = (...values: unknown[]) => logs.push(values);
    const lost = chatErrorResponse(
      new DatabaseError({ databaseCode: '57P01', name: 'PostgresError', message: 'terminating connection' }),
      { log },
    );
    expect([lost.status, lost.headers.get('retry-after')]).toEqual([503, '1']);
    expect(await lost.json()).toEqual({
      error: { code: 'database-unavailable', message: 'The database is unavailable; try again.' },
    });
    const broken = chatErrorResponse(
      new DatabaseError({ databaseCode: '42883', name: 'PostgresError', message: 'function does not exist' }),
      { log },
    );
    expect([broken.status, broken.headers.get('retry-after')]).toEqual([500, null]);
    expect(await broken.json()).toEqual({ error: { code: 'internal-error', message: 'The request failed.' } });
    expect(logs).toHaveLength(2);
  });
});
