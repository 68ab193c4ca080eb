import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGBOUNCER, requireDebianProgram } from './debian-packages.js';
import { freePort } from './postgres-cluster.js';

/** A throwaway PgBouncer in transaction mode on loopback, in front of one PostgreSQL server. */
export interface PgBouncer {
  port: number;
  stop: () => void;
}

/** $PGBOUNCER_BIN, or Debian's pgbouncer (installed first when missing and this process is root). */
function findPgBouncer(): string {
  const bin = process.env.PGBOUNCER_BIN ?? requireDebianProgram(PGBOUNCER);
  if (!existsSync(bin)) throw new Error(`PGBOUNCER_BIN is ${bin}, which does not exist.`);
  return bin;
}

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** Whether the daemon whose pid file is `pidFile` wrote it and is gone since. */
function exited(pidFile: string): boolean {
  if (!existsSync(pidFile)) return false;
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 0);
    return false;
  } catch {
    return true;
  }
}

/**
 * Waits until PgBouncer listens on `port`, or fails as soon as it exited. The deadline is for a daemon that does
 * neither, and is far beyond how long it takes to start on a loaded machine.
 */
async function waitForPort(port: number, logFile: string, pidFile: string): Promise<void> {
  for (const giveUpAt = Date.now() + 120_000; Date.now() < giveUpAt && !exited(pidFile);) {
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '(no log)';
  throw new Error(`PgBouncer did not listen on 127.0.0.1:${port}:\n${log}`);
}

/**
 * Starts PgBouncer as a daemon (as the `postgres` OS user when this process is root: PgBouncer refuses root) with
 * `pool_mode = transaction`, every database forwarded to `server`, and trust authentication for `users` only.
 */
export async function startPgBouncer({
  server,
  users,
}: {
  server: { host: string; port: number };
  users: string[];
}): Promise<PgBouncer> {
  const bin = findPgBouncer();
  const root = mkdtempSync(join(tmpdir(), 'agent-history-pgbouncer-'));
  chmodSync(root, 0o777);
  const port = await freePort();
  const logFile = join(root, 'pgbouncer.log');
  const pidFile = join(root, 'pgbouncer.pid');
  writeFileSync(join(root, 'users.txt'), users.map((user) => `"${user}" ""\n`).join(''));
  writeFileSync(
    join(root, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.host} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(root, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 20',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${logFile}`,
      `pidfile = ${pidFile}`,
      '',
    ].join('\n'),
  );
  const args = ['-d', '-q', join(root, 'pgbouncer.ini')];
  const result =
    process.getuid?.() === 0
      ? spawnSync('runuser', ['-u', 'postgres', '--', bin, ...args], { encoding: 'utf8' })
      : spawnSync(bin, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`pgbouncer failed (${result.status}): ${result.stderr || result.stdout}`);
  await waitForPort(port, logFile, pidFile);
  let stopped = false;
  return {
    port,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM'); // immediate shutdown: the suite's clients are gone
      } catch {
        // Already gone.
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
