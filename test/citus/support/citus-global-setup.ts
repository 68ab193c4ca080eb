import type { TestProject } from 'vitest/node';
import { startCitusCluster, onNode } from '../../support/citus-cluster.js';
import { APP_LOGIN } from '../../support/global-setup.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URLs of the Citus nodes without the database name, coordinator first. */
    citusServerUrls: string[];
  }
}

/**
 * Runs once per `npm run test:citus`: starts a coordinator and two workers on loopback and creates, on every node,
 * the roles that docs/citus.md, "Running on Citus", asks for: the application role may log in (Citus reaches the
 * workers as the current user, which is the application role inside a store transaction) and the pool's login
 * role (NOINHERIT, a member of it) has `citus.propagate_set_commands = 'local'` and, for this suite,
 * `citus.multi_task_query_log_level = 'error'`: any statement of the store that is not routed to one shard group
 * raises. Credentials between nodes: trust on 127.0.0.1 (production: `pg_dist_authinfo` or `.pgpass`).
 * Each test file then gets its own database on every node (`openTestDatabase`).
 */
export default async function setup(project: TestProject) {
  const cluster = await startCitusCluster({ workerCount: 2 });
  try {
    for (const node of cluster.nodes) {
      await onNode(node, 'postgres', (sql) =>
        sql.unsafe(`
          create role agent_history_app login;
          create role ${APP_LOGIN} login noinherit nosuperuser nobypassrls;
          grant agent_history_app to ${APP_LOGIN};
          alter role ${APP_LOGIN} set citus.propagate_set_commands = 'local';
          alter role ${APP_LOGIN} set citus.multi_task_query_log_level = 'error';
          alter role agent_history_app set citus.multi_task_query_log_level = 'error';`),
      );
    }
  } catch (error) {
    cluster.stop();
    throw error;
  }
  project.provide(
    'citusServerUrls',
    cluster.nodes.map((node) => node.url('').replace(/\/$/, '')),
  );
  return () => cluster.stop();
}
