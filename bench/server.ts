// The benchmark's own PostgreSQL 15 cluster: durability at the defaults (fsync on, synchronous_commit on), one
// fresh database per (workload, peer), and the application login the store connects through.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { migrate } from '../src/store/migrate.js';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgres-cluster.js';

/** The pool's login: not superuser, not owner, no BYPASSRLS, NOINHERIT; it reaches the tables only as `agent_history_app`. */
export const APP_LOGIN = 'agent_history_bench';
const TEMPLATE = 'bench_agent_history_template';

export interface BenchServer {
  /** A superuser URL. */
  adminUrl(database: string): string;
  /** A URL as the application login. */
  appUrl(database: string): string;
  /** Drops and creates `database` (migrated from the template when `migrated`), then CHECKPOINTs. */
  createDatabase(database: string, options?: { migrated?: boolean }): Promise<void>;
  dropDatabase(database: string): Promise<void>;
  checkpoint(): Promise<void>;
  info(): Promise<Record<string, unknown>>;
  /** The postmaster's pid (first line of `postmaster.pid` in the data directory), for the CPU meter. */
  postmasterPid(): Promise<number | null>;
  /** The cluster's WAL insert position, in bytes (on a connection kept open, so probing forks no backend). */
  walBytes(): Promise<number>;
  stop(): void;
}

export async function startBenchServer({
  profile = false,
  synchronousCommit = null as string | null,
} = {}): Promise<BenchServer> {
  const cluster: PostgresCluster = await startPostgresCluster({
    settings: {
      shared_buffers: '256MB',
      wal_buffers: '16MB',
      max_wal_size: '4GB',
      checkpoint_timeout: '30min',
      // W2 compares the sequence order with the server's commit timestamps.
      track_commit_timestamp: 'on',
      log_min_messages: 'warning',
      ...(profile
        ? {
            shared_preload_libraries: 'pg_stat_statements',
            'pg_stat_statements.track': 'all',
            'pg_stat_statements.track_planning': 'on',
          }
        : {}),
    },
  });
  const adminUrl = (database: string) => cluster.url(database);
  const appUrl = (database: string) =>
    cluster.url(database).replace('postgres://postgres@', `postgres://${APP_LOGIN}@`);
  const admin = async <RESULT>(database: string, work: (sql: postgres.Sql) => Promise<RESULT>) => {
    const sql = postgres(adminUrl(database), { max: 1, onnotice: () => {} });
    try {
      return await work(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  try {
    await admin('postgres', (sql) => sql.unsafe(`create database ${TEMPLATE}`));
    await admin(TEMPLATE, async (sql) => {
      await migrate(drizzle({ client: sql }));
      await sql.unsafe(`create role ${APP_LOGIN} login noinherit nosuperuser nobypassrls`);
      await sql.unsafe(`grant agent_history_app to ${APP_LOGIN}`);
      if (profile) await sql.unsafe('create extension pg_stat_statements');
    });
  } catch (error) {
    cluster.stop();
    throw error;
  }
  const probe = postgres(adminUrl('postgres'), { max: 1, onnotice: () => {} });
  return {
    adminUrl,
    appUrl,
    walBytes: async () => {
      const [row] = await probe<{ bytes: string }[]>`select (pg_current_wal_insert_lsn() - '0/0')::text as bytes`;
      return Number(row!.bytes);
    },
    async createDatabase(database, { migrated = false } = {}) {
      await admin('postgres', async (sql) => {
        await sql.unsafe(`drop database if exists ${database} with (force)`);
        await sql.unsafe(`create database ${database}${migrated ? ` template ${TEMPLATE}` : ''}`);
        if (synchronousCommit)
          await sql.unsafe(`alter database ${database} set synchronous_commit = ${synchronousCommit}`);
        // Flush the previous workload's dirty pages now rather than during this one.
        await sql.unsafe('checkpoint');
      });
      if (profile && !migrated)
        await admin(database, (sql) => sql.unsafe('create extension if not exists pg_stat_statements'));
    },
    postmasterPid: () =>
      admin('postgres', async (sql) => {
        const [{ setting }] = await sql<
          { setting: string }[]
        >`select setting from pg_settings where name = 'data_directory'`;
        try {
          return Number(readFileSync(join(setting, 'postmaster.pid'), 'utf8').split('\n')[0]) || null;
        } catch {
          return null;
        }
      }),
    checkpoint: () => admin('postgres', (sql) => sql.unsafe('checkpoint')).then(() => {}),
    dropDatabase: (database) =>
      admin('postgres', (sql) => sql.unsafe(`drop database if exists ${database} with (force)`)).then(() => {}),
    info: () =>
      admin('postgres', async (sql) => {
        const [{ version }] = await sql<{ version: string }[]>`select version()`;
        const settings = await sql<{ name: string; setting: string; unit: string | null }[]>`
          select name, setting, unit from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes',
            'shared_buffers', 'wal_level', 'max_connections', 'track_commit_timestamp', 'shared_preload_libraries')`;
        return {
          version,
          settings: Object.fromEntries(
            settings.map((row) => [
              row.name,
              row.unit === '8kB' ? `${(Number(row.setting) * 8) / 1024}MB` : `${row.setting}${row.unit ?? ''}`,
            ]),
          ),
        };
      }),
    stop: () => {
      void probe.end({ timeout: 1 }).catch(() => {});
      cluster.stop();
    },
  };
}

/** Checks, as the application login itself, that it is subject to row-level security. Throws otherwise. */
export async function assertRlsApplies(appUrl: string): Promise<Record<string, unknown>> {
  const sql = postgres(appUrl, { max: 1, onnotice: () => {} });
  try {
    const [role] = await sql<
      { login: string; superuser: boolean; bypassrls: boolean; inherit: boolean; owner: string }[]
    >`
      select current_user as login, r.rolsuper as superuser, r.rolbypassrls as bypassrls, r.rolinherit as inherit,
        (select pg_get_userbyid(relowner) from pg_class where relname = 'agent_message') as owner
      from pg_roles r where r.rolname = current_user`;
    const [forced] = await sql<{ forced: boolean }[]>`select bool_and(relforcerowsecurity and relrowsecurity) as forced
      from pg_class where relname like 'agent\\_%' and relkind = 'r'`;
    if (!role || role.superuser || role.bypassrls || role.owner === role.login || !forced?.forced) {
      throw new Error(`the app login would bypass row-level security: ${JSON.stringify({ ...role, ...forced })}`);
    }
    // Without the role switch (NOINHERIT) the login cannot read the tables at all: fails closed.
    const denied = await sql`select count(*) from agent_message`.then(
      () => false,
      () => true,
    );
    if (!denied) throw new Error('the app login reads agent_message without switching to agent_history_app');
    return { ...role, forceRowLevelSecurity: forced.forced, readsWithoutRoleSwitch: 'permission denied' };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
