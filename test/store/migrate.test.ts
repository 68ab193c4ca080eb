import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { entityKind } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle as drizzleNodePostgres } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import {
  InvalidArgumentError,
  migrate,
  MigrationPathConflictError,
  MIGRATIONS_FOLDER,
  type AgentHistoryDatabase,
} from '../../src/index.js';
import { MIGRATORS } from '../../src/store/migrate.js';
import { rowsOf } from '../../src/tenant/database.js';

const DRIZZLE = resolve(import.meta.dirname, '../../node_modules/drizzle-orm');
/** Postgres drivers of drizzle-orm whose migrator is not drizzle's plain one (or that may be absent in 0.45.0). */
const CONTRACT_ONLY = new Set(['pg-proxy', 'netlify-db']);
const shipped = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length;

async function applied(db: AgentHistoryDatabase): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await db.execute('select count(*)::int as n from agent_history.__agent_history_migrations'),
  );
  return row!.n;
}

async function withServerDatabase(use: (url: string) => Promise<void>) {
  const server = inject('postgresServerUrl');
  const name = `m_${randomUUID().replaceAll('-', '')}`;
  const admin = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  try {
    await use(`${server}/${name}`);
  } finally {
    await admin.unsafe(`drop database ${name} with (force)`);
    await admin.end();
  }
}

describe('migrate()', () => {
  it("should have a public migrator for every Postgres driver of drizzle-orm, each drizzle's own", async () => {
    const drivers = [...readdirSync(DRIZZLE), 'aws-data-api/pg'].filter(
      (dir) =>
        existsSync(join(DRIZZLE, dir, 'migrator.js')) &&
        existsSync(join(DRIZZLE, dir, 'driver.js')) &&
        readFileSync(join(DRIZZLE, dir, 'driver.js'), 'utf8').includes('pg-core'),
    );
    const kinds = Object.fromEntries(
      drivers.map((dir) => {
        const source = readFileSync(join(DRIZZLE, dir, 'driver.js'), 'utf8');
        return [dir, [...source.matchAll(/\[entityKind\] = "(\w+Database)"/g)].map(([, kind]) => kind!)];
      }),
    );
    for (const dir of drivers) {
      if (CONTRACT_ONLY.has(dir)) continue;
      expect(Object.keys(MIGRATORS), dir).toEqual(expect.arrayContaining(kinds[dir]!));
    }
    for (const [kind, load] of Object.entries(MIGRATORS)) {
      expect(typeof (await load()).migrate, kind).toBe('function');
    }
  });

  it.each([
    ['PGlite', 'PgliteDatabase'],
    ['postgres-js', 'PostgresJsDatabase'],
    ['node-postgres', 'NodePgDatabase'],
  ])('should migrate a fresh database through %s, then do nothing the second time', async (driver, kind) => {
    const run = async (db: AgentHistoryDatabase) => {
      expect((db.constructor as unknown as Record<symbol, string>)[entityKind]).toBe(kind);
      await migrate(db);
      await migrate(db);
      expect(await applied(db)).toBe(shipped);
    };
    if (driver === 'PGlite') {
      const client = await PGlite.create();
      await run(drizzlePglite({ client }) as unknown as AgentHistoryDatabase).finally(() => client.close());
      return;
    }
    await withServerDatabase(async (url) => {
      if (driver === 'postgres-js') {
        const client = postgres(url, { max: 1, onnotice: () => {} });
        await run(drizzlePostgres({ client }) as unknown as AgentHistoryDatabase).finally(() => client.end());
      } else {
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        pool.on('error', () => {}); // the drop below ends a client pool.end() is still closing
        await run(drizzleNodePostgres({ client: pool }) as unknown as AgentHistoryDatabase).finally(() => pool.end());
      }
    });
  });

  it("should migrate another driver's database through the migrators' dialect.migrate contract, and refuse one without it", async () => {
    const client = await PGlite.create();
    try {
      const db = drizzlePglite({ client }) as unknown as AgentHistoryDatabase & { dialect: unknown; session: unknown };
      class SomeOtherDatabase {}
      const other = Object.assign(new SomeOtherDatabase(), {
        dialect: db.dialect,
        session: db.session,
        execute: (query: never) => db.execute(query),
      }) as unknown as AgentHistoryDatabase;
      await migrate(other);
      expect(await applied(db)).toBe(shipped);
      const shapeless = Object.assign(new SomeOtherDatabase(), {
        execute: (query: never) => db.execute(query),
      }) as unknown as AgentHistoryDatabase;
      await expect(migrate(shapeless, { migrationsTable: 'elsewhere' })).rejects.toThrow(MigrationPathConflictError);
      const fresh = await PGlite.create();
      const freshDb = drizzlePglite({ client: fresh }) as unknown as AgentHistoryDatabase;
      const empty = Object.assign(new SomeOtherDatabase(), {
        execute: (query: never) => freshDb.execute(query),
      }) as unknown as AgentHistoryDatabase;
      await expect(migrate(empty)).rejects.toThrow(InvalidArgumentError);
      await fresh.close();
    } finally {
      await client.close();
    }
  });

  it.each(['PGlite', 'postgres-js'])(
    'should refuse, changing nothing, a database whose tables another path created (%s)',
    async (driver) => {
      const check = async (db: AgentHistoryDatabase) => {
        await migrate(db, { migrationsTable: 'other_path' });
        const error = await migrate(db).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(MigrationPathConflictError);
        expect(error).toMatchObject({
          code: 'migration-path-conflict',
          existing: 'agent_thread',
          migrationsTable: 'agent_history.__agent_history_migrations',
        });
        expect(rowsOf(await db.execute(`select to_regclass('agent_history.__agent_history_migrations') as t`))).toEqual(
          [{ t: null }],
        );
        // The path that made the tables goes on working.
        await migrate(db, { migrationsTable: 'other_path' });
      };
      if (driver === 'PGlite') {
        const client = await PGlite.create();
        await check(drizzlePglite({ client }) as unknown as AgentHistoryDatabase).finally(() => client.close());
        return;
      }
      await withServerDatabase(async (url) => {
        const client = postgres(url, { max: 1, onnotice: () => {} });
        await check(drizzlePostgres({ client }) as unknown as AgentHistoryDatabase).finally(() => client.end());
      });
    },
  );
});
