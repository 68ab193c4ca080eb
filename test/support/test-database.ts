import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { auto_explain } from '@electric-sql/pglite/contrib/auto_explain';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzleNodePostgres } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import pg from 'pg';
import postgres from 'postgres';
import postgresV4 from 'postgres-v4';
import { describe, inject, it } from 'vitest';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { rowsOf } from '../../src/tenant/database.js';
import { APP_LOGIN, TEMPLATE_DATABASE } from './global-setup.js';
import { AUTO_EXPLAIN_SETTINGS, explainNestedOnServer, plansOfNotices, type ExecutedPlan } from './nested-plans.js';
import { registerTestDatabase } from './register-test-database.js';

/** The databases every suite runs on: PGlite, and PostgreSQL 15 through postgres-js 3. */
export const BACKENDS = ['pglite', 'postgres'] as const;
/**
 * {@link BACKENDS} and the same PostgreSQL 15 through postgres-js 4, through node-postgres (a `pg.Pool`) and through
 * node-postgres behind PgBouncer in transaction mode: for the store and context-store contracts and the isolation,
 * read-equivalence and append-concurrency suites (the rest of the suite does not depend on the driver).
 */
export const CONTRACT_BACKENDS = [...BACKENDS, 'postgres-js-4', 'node-postgres', 'pgbouncer'] as const;
export type Backend = (typeof CONTRACT_BACKENDS)[number];

/** A fresh, migrated database for one test file. */
export interface TestDatabase {
  backend: Backend;
  /**
   * What the store uses. On PostgreSQL 15: a pool (postgres-js 3 or 4, or a `pg.Pool`, direct or through PgBouncer) logged
   * in as a plain login role (not superuser, not owner, no BYPASSRLS) that reaches the tables only through the
   * application role. On PGlite: its one connection.
   */
  db: AgentHistoryDatabase;
  /** A superuser connection, for reading the database directly (it bypasses row-level security). */
  admin: { query<ROW = Record<string, unknown>>(text: string, params?: unknown[]): Promise<ROW[]> };
  /** For PostgreSQL 15 only: a URL as the app login, for extra pools (through PgBouncer on `pgbouncer`). */
  appUrl?: string;
  /** For PostgreSQL 15 only: a superuser URL of this database. */
  adminUrl?: string;
  /**
   * Runs `statement` as superuser with `auto_explain` logging every statement it runs, nested ones too (the queries
   * inside a PL/pgSQL function), and returns their plans as executed (`EXPLAIN (ANALYZE, FORMAT JSON)`), innermost
   * first. For asserting which plan a function chose, from what the server did rather than from timing.
   */
  explainNested(statement: string, settings?: readonly string[]): Promise<ExecutedPlan[]>;
  close(): Promise<void>;
}

/** How a test database is opened. */
export interface TestDatabaseOptions {
  /**
   * For PostgreSQL 15: how many connections the app login's pool may open.
   * @default 10
   */
  poolSize?: number;
}

/** Opens a fresh, migrated database on `backend`; the caller closes it. */
export async function openTestDatabase(
  backend: Backend,
  { poolSize = 10 }: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const client = await PGlite.create({
      loadDataDir: new Blob([readFileSync(inject('pgliteDumpPath'))]),
      extensions: { auto_explain },
    });
    return {
      backend,
      db: drizzlePglite({ client }) as unknown as AgentHistoryDatabase,
      admin: { query: async (text, params) => (await client.query(text, params as unknown[])).rows as never[] },
      explainNested: async (statement, settings = []) => {
        const notices: string[] = [];
        // PGlite has one connection, the store's too: the settings live in this transaction only.
        await client.transaction(async (tx) => {
          await tx.exec(
            `LOAD 'auto_explain'; ${[...AUTO_EXPLAIN_SETTINGS, ...settings].map((setting) => `SET LOCAL ${setting};`).join(' ')}`,
          );
          await tx.query(statement, [], { onNotice: (notice) => notices.push(notice.message ?? '') });
        });
        return plansOfNotices(notices);
      },
      close: () => client.close(),
    };
  }
  const server = inject('postgresServerUrl');
  const database = `t_${randomUUID().replaceAll('-', '')}`;
  const maintenance = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
  await maintenance.unsafe(`create database ${database} template ${TEMPLATE_DATABASE}`);
  await maintenance.end();
  const adminUrl = `${server}/${database}`;
  const appUrl =
    backend === 'pgbouncer'
      ? `${inject('pgbouncerServerUrl').replace('postgres://', `postgres://${APP_LOGIN}@`)}/${database}`
      : adminUrl.replace('postgres://postgres@', `postgres://${APP_LOGIN}@`);
  const adminClient = postgres(adminUrl, { max: 2, onnotice: () => {} });
  const app = openAppPool(backend, appUrl, poolSize);
  return {
    backend,
    db: app.db,
    admin: { query: async (text, params) => rowsOf(await adminClient.unsafe(text, params as never[])) },
    appUrl,
    adminUrl,
    explainNested: (statement, settings) => explainNestedOnServer(adminUrl, statement, settings),
    close: async () => {
      await app.end();
      await adminClient.end();
      const cleanup = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${database} with (force)`);
      await cleanup.end();
    },
  };
}

/** The app login's pool on `backend`: postgres-js 3 or 4, or node-postgres (directly or through PgBouncer). */
function openAppPool(backend: Backend, appUrl: string, poolSize: number) {
  if (backend === 'postgres') {
    const client = postgres(appUrl, { max: poolSize, onnotice: () => {} });
    return { db: drizzlePostgres({ client }) as unknown as AgentHistoryDatabase, end: () => client.end() };
  }
  if (backend === 'postgres-js-4') {
    // drizzle-orm's postgres-js driver is typed against postgres-js 3; at run time it takes either.
    const client = postgresV4(appUrl, { max: poolSize, onnotice: () => {} });
    return {
      db: drizzlePostgres({ client: client as unknown as postgres.Sql }) as unknown as AgentHistoryDatabase,
      end: () => client.end(),
    };
  }
  const pool = new pg.Pool({ connectionString: appUrl, max: poolSize });
  // An idle client's error (the server ended it) must not crash the test process; the next query reports it.
  pool.on('error', () => {});
  return { db: drizzleNodePostgres({ client: pool }) as unknown as AgentHistoryDatabase, end: () => pool.end() };
}

/**
 * Opens a fresh database on `backend` before the tests of the calling `describe` and closes it after them. Returns
 * a handle to it right away, for the tests (and hooks registered later) to use: reading it before the database is
 * open throws.
 *
 * @example
 * describe.each(BACKENDS)('appendMessage on %s', (backend) => {
 *   const database = useTestDatabase(backend);
 *   it('should ...', async () => {
 *     const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
 *   });
 * });
 */
export function useTestDatabase(backend: Backend, options: TestDatabaseOptions = {}): TestDatabase {
  return registerTestDatabase(backend, () => openTestDatabase(backend, options));
}

/**
 * Whether the suites run on a Citus coordinator (true in the Citus suite's stand-in for this module): for a suite
 * that sizes its work or its time limit by the server, every call there paying a coordinator → worker hop.
 */
export const ON_CITUS: boolean = false;

/**
 * `it` for a check that holds on PGlite and PostgreSQL but cannot run as written on Citus (the Citus suite's
 * stand-in for this module defines it as a function that defines nothing; test/citus/ holds the Citus form).
 */
export const itOffCitus: typeof it = it;

/** `describe` for a group of checks that cannot run as written on Citus (see {@link itOffCitus}). */
export const describeOffCitus: typeof describe = describe;
