// The e2e's PostgreSQL 15: a throwaway cluster on loopback (test/support/postgres-cluster.ts: initdb and pg_ctl as
// the `postgres` OS user, trust authentication on 127.0.0.1, a free port, a temporary folder), set up the way the
// example's README ("Run it") tells an operator: an owner login that is neither superuser nor BYPASSRLS and owns the
// database, a NOINHERIT login for the app, the migrations run as the owner, then the owner's grants to the login.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findPostgresBin, psql, startPostgresCluster } from '../../../test/support/postgres-cluster.ts';

export const OWNER = 'app_owner';
export const LOGIN = 'app_login';
const DATABASE = 'app';

/** The owner's one grant of the root README's "Production setup", as the example's README repeats it. */
export const GRANT_ROLE = `grant agent_history_app to ${LOGIN}`;

export interface AppDatabase {
  /** The app's DATABASE_URL: the NOINHERIT login. */
  appUrl: string;
  /** `npm run db:migrate` with MIGRATION_DATABASE_URL = the owner; throws with its output when it fails. */
  migrate: (appDir: string) => string;
  /** SQL in the app's database, as the owner (the grants) or as the superuser (to look, bypassing RLS). */
  sql: (as: 'owner' | 'superuser', command: string) => string;
  /** The cluster's superuser reads pg_stat_activity: the login of every client connection to the app's database. */
  appConnectionLogins: () => string[];
  /** Stops the server (pg_ctl stop -m fast), leaving the app running. */
  stopServer: () => void;
  /** Stops the server if it runs, and removes the cluster's folder. */
  remove: () => void;
}

export async function startAppDatabase(): Promise<AppDatabase> {
  const cluster = await startPostgresCluster();
  const urlOf = (role: string) => `postgres://${role}@127.0.0.1:${cluster.port}/${DATABASE}`;
  const superuser = cluster.url(DATABASE);
  let serverStopped = false;
  const dataDirectory = () => psql(cluster.url(), 'show data_directory').trim();
  try {
    // What the operator runs as a superuser (one statement each: create database refuses a transaction block).
    psql(cluster.url(), `create role ${OWNER} login createrole`);
    psql(cluster.url(), `create database ${DATABASE} owner ${OWNER}`);
    psql(cluster.url(), `create role ${LOGIN} login noinherit`);
  } catch (error) {
    cluster.stop();
    throw error;
  }
  const dataDir = dataDirectory();
  return {
    appUrl: urlOf(LOGIN),
    migrate: (appDir) => {
      const result = spawnSync('npm', ['run', '--silent', 'db:migrate'], {
        cwd: appDir,
        env: { ...process.env, MIGRATION_DATABASE_URL: urlOf(OWNER), DATABASE_URL: urlOf(LOGIN) },
        encoding: 'utf8',
      });
      const output = `${result.stdout}${result.stderr}`.trim();
      if (result.status !== 0) throw new Error(`npm run db:migrate failed (${result.status}):\n${output}`);
      return output;
    },
    sql: (as, command) => psql(as === 'owner' ? urlOf(OWNER) : superuser, command),
    appConnectionLogins: () =>
      psql(
        cluster.url(),
        `select usename from pg_stat_activity where datname = '${DATABASE}' and backend_type = 'client backend'`,
      )
        .split('\n')
        .filter((line) => line.length > 0),
    stopServer: () => {
      const pgCtl = [join(findPostgresBin(), 'pg_ctl'), '-D', dataDir, '-m', 'fast', '-w', 'stop'];
      const result =
        process.getuid?.() === 0
          ? spawnSync('runuser', ['-u', 'postgres', '--', ...pgCtl], { encoding: 'utf8' })
          : spawnSync(pgCtl[0]!, pgCtl.slice(1), { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`pg_ctl stop failed: ${result.stderr || result.stdout}`);
      serverStopped = true;
    },
    remove: () => {
      if (!serverStopped) return cluster.stop();
      // The server is stopped already: only its folder (the cluster's temporary root, the data folder's parent).
      rmSync(dirname(dataDir), { recursive: true, force: true });
    },
  };
}
