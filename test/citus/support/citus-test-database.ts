import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { inject, type describe, type it } from 'vitest';
import { migrate } from '../../../src/store/migrate.js';
import { rowsOf, type AgentHistoryDatabase } from '../../../src/tenant/database.js';
import { APP_LOGIN } from '../../support/global-setup.js';
import { explainNestedOnServer, type ExecutedPlan } from '../../support/nested-plans.js';
import { registerTestDatabase } from '../../support/register-test-database.js';
import { citusClusterAt, createCitusDatabase, dropCitusDatabase } from '../../support/citus-cluster.js';

// The Citus suite's stand-in for test/support/test-database.ts (vitest.citus.config.ts aliases it), so the store,
// isolation, concurrency, redaction and retention suites run unchanged against a Citus coordinator.

/** The databases the suites run on: the Citus coordinator, under the name the suites use for a server. */
export const BACKENDS = ['postgres'] as const;
/** The driver and pooler variants run on PostgreSQL only: on Citus the contract suites run on the coordinator alone. */
export const CONTRACT_BACKENDS = BACKENDS;
export type Backend = 'pglite' | 'postgres' | 'postgres-js-4' | 'node-postgres' | 'pgbouncer';

/** A fresh, migrated, distributed database for one test file (same shape as test/support/test-database.ts). */
export interface TestDatabase {
  backend: Backend;
  /** A pool on the coordinator logged in as the app login (NOINHERIT member of the application role). */
  db: AgentHistoryDatabase;
  /** A superuser connection to the coordinator (bypasses row-level security; may run multi-shard queries). */
  admin: { query<ROW = Record<string, unknown>>(text: string, params?: unknown[]): Promise<ROW[]> };
  appUrl?: string;
  adminUrl?: string;
  /** The plans `statement` ran with on the coordinator (see test/support/test-database.ts). */
  explainNested(statement: string, settings?: readonly string[]): Promise<ExecutedPlan[]>;
  close(): Promise<void>;
}

/** The distribution statements of docs/citus.md, "Running on Citus": its SQL block calling create_distributed_table. */
export function docsDistributionSql(): string {
  const page = readFileSync(resolve(import.meta.dirname, '../../../docs/citus.md'), 'utf8');
  const section = page.slice(page.indexOf('## Running on Citus'));
  const block = [...section.matchAll(/```sql\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .find((sql) => sql.includes('create_distributed_table'));
  if (!block) throw new Error('docs/citus.md has no "Running on Citus" SQL block calling create_distributed_table');
  return block;
}

/**
 * Creates a database on every node (extension, nodes registered), migrates it on the coordinator as superuser and
 * runs the distribution block of docs/citus.md verbatim.
 */
export async function openTestDatabase(
  backend: Backend,
  { poolSize = 10 }: { poolSize?: number } = {},
): Promise<TestDatabase> {
  if (backend !== 'postgres') throw new Error(`The Citus suite runs on the coordinator only, not on ${backend}`);
  const cluster = citusClusterAt(inject('citusServerUrls'));
  const database = `t_${randomUUID().replaceAll('-', '')}`;
  await createCitusDatabase(cluster, database);
  const adminUrl = cluster.coordinator.url(database);
  const appUrl = adminUrl.replace('postgres://postgres@', `postgres://${APP_LOGIN}@`);
  const adminClient = postgres(adminUrl, { max: 2, onnotice: () => {} });
  try {
    const migrator = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await migrate(drizzlePostgres({ client: migrator }));
      // One statement at a time: Citus refuses a function distribution after parallel DDL in one transaction.
      for (const statement of docsDistributionSql().split(/;\s*\n/)) {
        const text = statement.replace(/^--.*$/gm, '').trim();
        if (text) await migrator.unsafe(text);
      }
    } finally {
      await migrator.end();
    }
  } catch (error) {
    await adminClient.end();
    await dropCitusDatabase(cluster, database);
    throw error;
  }
  const appClient = postgres(appUrl, { max: poolSize, onnotice: () => {} });
  return {
    backend,
    db: drizzlePostgres({ client: appClient }) as unknown as AgentHistoryDatabase,
    admin: { query: async (text, params) => rowsOf(await adminClient.unsafe(text, params as never[])) },
    appUrl,
    adminUrl,
    explainNested: (statement, settings) => explainNestedOnServer(adminUrl, statement, settings),
    close: async () => {
      await appClient.end();
      await adminClient.end();
      await dropCitusDatabase(cluster, database);
    },
  };
}

/** How a test database is opened (same shape as test/support/test-database.ts). */
export interface TestDatabaseOptions {
  /** How many connections the app login's pool may open. @default 10 */
  poolSize?: number;
}

/** A distributed database opened in `beforeAll` and closed in `afterAll` (same shape as test/support/test-database.ts). */
export function useTestDatabase(backend: Backend, options: TestDatabaseOptions = {}): TestDatabase {
  return registerTestDatabase(backend, () => openTestDatabase(backend, options));
}

/** The suites run on a Citus coordinator (see test/support/test-database.ts). */
export const ON_CITUS: boolean = true;

/**
 * A check that cannot run as written on Citus (a probe without a tenant filter is a multi-shard query, which this
 * suite makes raise; `update … set tenant_id` changes the distribution column; a role created in a test transaction
 * does not exist on the workers; lock waits happen on the workers): here it defines nothing, so nothing is reported
 * as skipped. test/citus/ holds the Citus form of each.
 */
export const itOffCitus = Object.assign(() => {}, { each: () => () => {} }) as unknown as typeof it;

/** A group of checks that cannot run as written on Citus: here it defines nothing (see {@link itOffCitus}). */
export const describeOffCitus = Object.assign(() => {}, { each: () => () => {} }) as unknown as typeof describe;
