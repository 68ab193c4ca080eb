// A new user's commonest slip: `createAgentHistory({ db: client })` with the driver's client instead of
// `drizzle({ client })`. It must be refused at once, naming `db`, not fail later inside the first call with
// "db.transaction is not a function".
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
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

  it('should refuse a postgres-js client that transforms what it reads, naming the transform, and take one that does not', async () => {
    // postgres.camel renames every column (message_id → messageId: the store's reads would find null) and camel-cases
    // the keys inside every json value (a tool input's { user_id } would come back as { userId }).
    const refused = [
      [postgres.camel, 'transform.column, transform.value'],
      [postgres.toCamel, 'transform.column, transform.value'],
      [{ value: (value: unknown) => value }, 'transform.value'],
      [{ row: { from: (row: unknown) => row } }, 'transform.row'],
    ] as const;
    const clients = [...refused.map(([transform]) => transform), { undefined: null }].map((transform) =>
      postgres('postgres://127.0.0.1:1/never-connected', { max: 1, transform: transform as never }),
    );
    try {
      for (const [index, [, named]] of refused.entries()) {
        const create = () => createAgentHistory({ db: drizzlePostgres({ client: clients[index]! }) as never });
        expect(create).toThrow(InvalidArgumentError);
        expect(create).toThrow(`Invalid db "a postgres-js client with ${named}"`);
      }
      // Turning undefined parameters into null changes nothing the store reads.
      expect(() => createAgentHistory({ db: drizzlePostgres({ client: clients.at(-1)! }) as never })).not.toThrow();
    } finally {
      for (const sql of clients) await sql.end();
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
