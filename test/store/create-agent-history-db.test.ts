// A new user's commonest slip: `createAgentHistory({ db: client })` with the driver's client instead of
// `drizzle({ client })`. It must be refused at once, naming `db`, not fail later inside the first call with
// "db.transaction is not a function".
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { createAgentHistory } from '../../src/store/create-agent-history.js';

describe('createAgentHistory({ db })', () => {
  let client: PGlite;
  beforeAll(async () => {
    client = await PGlite.create();
  });
  afterAll(async () => {
    await client.close();
  });

  it("should refuse a driver's client, or no database, with InvalidArgumentError naming db", async () => {
    const sql = postgres('postgres://127.0.0.1:1/never-connected', { max: 1 });
    const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/never-connected' });
    try {
      // A copy of a Drizzle database without its prototype has its methods but is not one.
      const copy = Object.assign(Object.create(null), { transaction: () => {}, execute: () => {} });
      for (const db of [client, sql, pool, undefined, null, {}, 'postgres://localhost/app', copy]) {
        let refused: unknown;
        try {
          createAgentHistory({ db: db as never });
        } catch (error) {
          refused = error;
        }
        expect(
          refused,
          typeof db === 'object' && db !== null && Object.getPrototypeOf(db) === null
            ? 'a copy without a prototype'
            : String(db),
        ).toBeInstanceOf(InvalidArgumentError);
        expect((refused as InvalidArgumentError).argument).toBe('db');
        expect((refused as InvalidArgumentError).message).toContain('drizzle({ client })');
        // The client is named, not dumped: postgres-js's `sql` is a function whose source would fill the message.
        expect((refused as InvalidArgumentError).message).not.toMatch(/=>|strings|\n/);
      }
    } finally {
      await sql.end();
      await pool.end();
    }
  });

  it('should take a Drizzle database and a Drizzle transaction', async () => {
    const db = drizzle({ client });
    expect(() => createAgentHistory({ db })).not.toThrow();
    await db.transaction(async (tx) => {
      expect(() => createAgentHistory({ db: tx })).not.toThrow();
    });
  });
});
