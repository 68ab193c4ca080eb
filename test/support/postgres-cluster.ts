import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { POSTGRESQL_15, requireDebianProgram } from './debian-packages.js';

/** A throwaway PostgreSQL 15 cluster on loopback, started from Debian's postgresql-15 binaries. */
export interface PostgresCluster {
  /** A superuser URL to the `postgres` database. */
  url: (database?: string) => string;
  port: number;
  stop: () => void;
}

/**
 * The folder of PostgreSQL 15's programs: $PG_BIN, or Debian's postgresql-15 (installed first when missing and
 * this process is root: test/support/debian-packages.ts).
 */
export function findPostgresBin(): string {
  const bin = process.env.PG_BIN ?? dirname(requireDebianProgram(POSTGRESQL_15));
  if (!existsSync(join(bin, 'initdb')))
    throw new Error(`PG_BIN is ${bin}, which has no initdb: point it at PostgreSQL 15's bin folder.`);
  return bin;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster in a temporary folder: initdb and pg_ctl run as the `postgres` OS user when this process is
 * root (initdb refuses root). Trust authentication on 127.0.0.1 only.
 */
export async function startPostgresCluster({
  settings = {},
}: { settings?: Record<string, string | number> } = {}): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  const root = mkdtempSync(join(tmpdir(), 'agent-history-pg-'));
  const dataDir = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  chmodSync(root, 0o777);
  const run = (command: string, args: string[]) => {
    const result = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { encoding: 'utf8' })
      : spawnSync(join(bin, command), args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${command} failed (${result.status}): ${result.stderr || result.stdout}`);
    return result.stdout;
  };
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  const port = await freePort();
  const options = {
    port,
    listen_addresses: '127.0.0.1',
    unix_socket_directories: root,
    max_connections: 200,
    shared_buffers: '128MB',
    ...settings,
  };
  const flags = Object.entries(options)
    .map(([key, value]) => `-c ${key}=${value}`)
    .join(' ');
  run('pg_ctl', ['-D', dataDir, '-l', join(root, 'server.log'), '-o', flags, '-w', '-t', '300', 'start']);
  let stopped = false;
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/** Runs SQL as the cluster's superuser through psql (used before any Node client exists). */
export function psql(url: string, command: string): string {
  return execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qAtc', command], { encoding: 'utf8' });
}
