import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { migrate } from '../../../src/store/migrate.js';
import type { AgentHistoryDatabase } from '../../../src/tenant/database.js';
import { APP_LOGIN } from '../../support/global-setup.js';
import { findPostgresBin, freePort } from '../../support/postgres-cluster.js';

/**
 * A private PostgreSQL 15 cluster that a fault suite may stop, crash and restart without touching the shared
 * one. Unlike the shared test cluster it keeps `fsync` and `synchronous_commit` on: an acknowledged commit
 * must survive a crash.
 */
export interface RestartableCluster {
  /** A superuser URL of the migrated `agent_history` database. */
  adminUrl: string;
  /** A URL of the same database as the plain login role the store uses. */
  appUrl: string;
  /** Stops the server: `fast` disconnects every session cleanly, `immediate` is a crash (recovery on start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  destroy(): Promise<void>;
}

export async function startRestartableCluster(): Promise<RestartableCluster> {
  const bin = findPostgresBin();
  const root = mkdtempSync(join(tmpdir(), 'agent-history-faults-'));
  chmodSync(root, 0o777);
  const dataDir = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  // Asynchronous, so that the clients under test keep running (and failing) while the server goes down.
  const run = async (command: string, args: string[]) => {
    try {
      if (asRoot) await promisify(execFile)('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]);
      else await promisify(execFile)(join(bin, command), args);
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${command} ${args.join(' ')} failed: ${stderr || stdout || String(error)}`);
    }
  };
  await run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  const port = await freePort();
  const flags = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${root} -c max_connections=200 -c shared_buffers=64MB`;
  let running = false;
  const start = async () => {
    await run('pg_ctl', ['-D', dataDir, '-l', join(root, 'server.log'), '-o', flags, '-w', '-t', '300', 'start']);
    running = true;
  };
  const stop = async (mode: 'fast' | 'immediate') => {
    await run('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '300', 'stop']);
    running = false;
  };
  await start();
  const server = `postgres://postgres@127.0.0.1:${port}`;
  const maintenance = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await maintenance.unsafe('create database agent_history');
  } finally {
    await maintenance.end();
  }
  const adminUrl = `${server}/agent_history`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle({ client: admin }) as unknown as AgentHistoryDatabase);
    await admin.unsafe(
      `create role ${APP_LOGIN} login noinherit nosuperuser nobypassrls; grant agent_history_app to ${APP_LOGIN};`,
    );
  } finally {
    await admin.end();
  }
  return {
    adminUrl,
    appUrl: adminUrl.replace('postgres://postgres@', `postgres://${APP_LOGIN}@`),
    stop,
    start,
    destroy: async () => {
      try {
        if (running) await stop('immediate');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
