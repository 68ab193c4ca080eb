import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/store/migrate.js';
import { PGBOUNCER, POSTGRESQL_15, requireDebianPrograms } from './debian-packages.js';
import { startPgBouncer, type PgBouncer } from './pgbouncer.js';
import { startPostgresCluster, type PostgresCluster } from './postgres-cluster.js';

export const TEMPLATE_DATABASE = 'agent_history_template';
export const APP_LOGIN = 'agent_history_login';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the PostgreSQL 15 server, without the database name. */
    postgresServerUrl: string;
    /** The file of a migrated PGlite database, dumped once and loaded per test file. */
    pgliteDumpPath: string;
    /** The same server through PgBouncer in transaction mode: a URL without user and database name. */
    pgbouncerServerUrl: string;
  }
}

/**
 * Runs once per `npm test`: starts a throwaway PostgreSQL 15 cluster (or uses DATABASE_URL) with
 * `pg_stat_statements` loaded, PgBouncer in transaction mode in front of it, migrates a template database that
 * each test file clones, creates the application login role, and dumps a migrated PGlite database. Debian's
 * postgresql-15 and pgbouncer are installed first when missing and the run is root (PG_BIN, PGBOUNCER_BIN and
 * DATABASE_URL point it at other copies); otherwise a missing one fails the run, naming the command that installs
 * it. Nothing is skipped.
 */
export default async function setup(project: TestProject) {
  // Both at once: one apt-get run, or one error naming everything that is missing.
  requireDebianPrograms([
    ...(process.env.DATABASE_URL || process.env.PG_BIN ? [] : [POSTGRESQL_15]),
    ...(process.env.PGBOUNCER_BIN ? [] : [PGBOUNCER]),
  ]);
  let cluster: PostgresCluster | undefined;
  let serverUrl: string;
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '';
    serverUrl = url.toString().replace(/\/$/, '');
  } else {
    cluster = await startPostgresCluster({
      settings: {
        fsync: 'off',
        synchronous_commit: 'off',
        full_page_writes: 'off',
        // Every statement the store sends, for test/support/statement-routing.ts (postgresql-15 ships it in contrib).
        shared_preload_libraries: 'pg_stat_statements',
        'pg_stat_statements.max': 20000,
      },
    });
    serverUrl = cluster.url('').replace(/\/$/, '');
  }
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-pglite-'));
  const pgliteDumpPath = join(folder, 'migrated.tar');
  let bouncer: PgBouncer | undefined;
  const teardown = () => {
    rmSync(folder, { recursive: true, force: true });
    bouncer?.stop();
    cluster?.stop();
  };
  let pgbouncerServerUrl: string;
  try {
    const server = new URL(serverUrl);
    bouncer = await startPgBouncer({
      server: { host: server.hostname, port: Number(server.port || 5432) },
      users: [decodeURIComponent(server.username), APP_LOGIN],
    });
    pgbouncerServerUrl = `postgres://127.0.0.1:${bouncer.port}`;
    await prepareServer(serverUrl);
    const lite = await PGlite.create();
    await migrate(drizzlePglite({ client: lite }));
    const dump = await lite.dumpDataDir('none');
    writeFileSync(pgliteDumpPath, Buffer.from(await dump.arrayBuffer()));
    await lite.close();
  } catch (error) {
    teardown();
    throw error;
  }
  project.provide('postgresServerUrl', serverUrl);
  project.provide('pgliteDumpPath', pgliteDumpPath);
  project.provide('pgbouncerServerUrl', pgbouncerServerUrl);
  return teardown;
}

async function prepareServer(serverUrl: string) {
  const admin = postgres(`${serverUrl}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${TEMPLATE_DATABASE}`);
    await admin.unsafe(`create database ${TEMPLATE_DATABASE}`);
    // In `postgres`, not in the template: the test databases' catalogs stay exactly what the migrations make.
    await admin.unsafe('create extension if not exists pg_stat_statements');
    const templateClient = postgres(`${serverUrl}/${TEMPLATE_DATABASE}`, { max: 1, onnotice: () => {} });
    try {
      await migrate(drizzlePostgres({ client: templateClient }));
      // The pool's login role: not superuser, not owner, no BYPASSRLS, NOINHERIT (fails closed without the role switch).
      await templateClient.unsafe(`
        do $$ begin
          if not exists (select 1 from pg_roles where rolname = '${APP_LOGIN}') then
            create role ${APP_LOGIN} login noinherit nosuperuser nobypassrls;
          end if;
        end $$;
        grant agent_history_app to ${APP_LOGIN};`);
    } finally {
      await templateClient.end();
    }
  } finally {
    await admin.end();
  }
}
