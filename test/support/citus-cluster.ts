import { existsSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { findPostgresBin, startPostgresCluster, type PostgresCluster } from './postgres-cluster.js';

/** One node of a Citus cluster: its port on 127.0.0.1 and a superuser URL per database. */
export type CitusNode = Pick<PostgresCluster, 'port' | 'url'>;

/** A throwaway Citus cluster on loopback: one coordinator and its workers, each its own PostgreSQL 15 server. */
export interface CitusCluster {
  coordinator: CitusNode;
  workers: CitusNode[];
  /** Every node, coordinator first. */
  nodes: CitusNode[];
  stop: () => void;
}

/** The cluster of the superuser server URLs (no database; coordinator first) that the global setup provides. */
export function citusClusterAt(serverUrls: string[]): Omit<CitusCluster, 'stop'> {
  const nodes = serverUrls.map((server) => ({
    port: Number(new URL(server).port),
    url: (database = 'postgres') => `${server}/${database}`,
  }));
  return { coordinator: nodes[0]!, workers: nodes.slice(1), nodes };
}

/** Throws, naming how to get Citus, when the PostgreSQL 15 install has no `citus.so`. */
export function assertCitusInstalled(): void {
  const bin = findPostgresBin();
  const library = join(bin, '..', 'lib', 'citus.so');
  if (!existsSync(library)) {
    throw new Error(
      `Citus is not installed for the PostgreSQL 15 in ${bin} (no ${library}). Citus is not in Debian's archive: ` +
        'build it from source into PostgreSQL 15 (as root: `bash ../shared/vendor/build-citus.sh` when the vendored ' +
        'source sits beside the checkout, which is what `.ci/run` does; otherwise Citus 13.x from ' +
        'its upstream source with `./configure && make && make install`), then run `npm run test:citus` again.',
    );
  }
}

/**
 * Starts a coordinator and `workerCount` workers (shared_preload_libraries=citus, trust on 127.0.0.1 only, fsync
 * off), and creates the `citus` extension in each node's `postgres` database. Nodes are added to the coordinator
 * per database (Citus keeps its metadata per database): see {@link createCitusDatabase}.
 */
export async function startCitusCluster({ workerCount = 2 }: { workerCount?: number } = {}): Promise<CitusCluster> {
  assertCitusInstalled();
  const settings = {
    shared_preload_libraries: 'citus',
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: 300,
  };
  const nodes: PostgresCluster[] = [];
  const stop = () => {
    for (const node of nodes.reverse()) node.stop();
  };
  try {
    for (let index = 0; index <= workerCount; index++) nodes.push(await startPostgresCluster({ settings }));
    for (const node of nodes)
      await onNode(node, 'postgres', (sql) => sql.unsafe('create extension if not exists citus'));
  } catch (error) {
    stop();
    throw error;
  }
  const [coordinator, ...workers] = nodes;
  return { coordinator: coordinator!, workers, nodes: [...nodes], stop };
}

/** Runs `work` with a one-connection superuser client to `database` on one node. */
export async function onNode<RESULT>(
  node: CitusNode,
  database: string,
  work: (sql: postgres.Sql) => Promise<RESULT>,
): Promise<RESULT> {
  const client = postgres(node.url(database), { max: 1, onnotice: () => {} });
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates `database` on every node with the `citus` extension, and registers the coordinator and the workers in
 * it. `citus_add_node` calls are serialized across databases with an advisory lock in the coordinator's
 * `postgres` database (concurrent additions deadlock).
 */
export async function createCitusDatabase(cluster: Omit<CitusCluster, 'stop'>, database: string): Promise<void> {
  for (const node of cluster.nodes) {
    await onNode(node, 'postgres', (sql) => sql.unsafe(`create database ${database}`));
    await onNode(node, database, (sql) => sql.unsafe('create extension citus'));
  }
  await onNode(cluster.coordinator, 'postgres', async (lock) => {
    await lock.unsafe('select pg_advisory_lock(1616)');
    try {
      await onNode(cluster.coordinator, database, async (sql) => {
        await sql.unsafe(`select citus_set_coordinator_host('127.0.0.1', ${cluster.coordinator.port})`);
        for (const worker of cluster.workers) await sql.unsafe(`select citus_add_node('127.0.0.1', ${worker.port})`);
      });
    } finally {
      await lock.unsafe('select pg_advisory_unlock(1616)');
    }
  });
}

/** Drops `database` on every node. */
export async function dropCitusDatabase(cluster: Omit<CitusCluster, 'stop'>, database: string): Promise<void> {
  for (const node of cluster.nodes) {
    await onNode(node, 'postgres', (sql) => sql.unsafe(`drop database if exists ${database} with (force)`));
  }
}
