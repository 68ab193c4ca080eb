import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Checks of the shared suites that do not carry over to Citus as written; test/citus/citus-isolation.test.ts holds
 * their Citus forms. Probes without a tenant filter are multi-shard queries, which this suite makes raise (see
 * the global setup); `update … set tenant_id` changes the distribution column (Citus refuses: 0A000); a role
 * created inside a test transaction does not exist on the workers; lock waits happen on the workers, not in the
 * coordinator's pg_stat_activity, and `for update` without a tenant filter is not routed. The reliability sweep's
 * Citus form, with the attacker in the victim's shard, is test/citus/citus-cross-tenant.test.ts.
 */
const NOT_ON_CITUS = [
  "should see, update and delete none of another tenant's rows in any table",
  'should refuse to write a row for another tenant',
  'should see no rows at all when no tenant is set',
  'should hide every row from a table owner that is not superuser',
  'racing requests with the same',
  'should let exactly one of 10 writers with the same expected version win',
  'should answer every cross-tenant operation with NotFoundError or an empty result',
];
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `npm run test:citus`: the store's suites against a Citus coordinator with two workers (not part of `npm test`:
 * it needs Citus installed into PostgreSQL 15). The suites import test/support/test-database.ts; here that module is
 * test/citus/support/citus-test-database.ts, which hands them a distributed database on the coordinator.
 */
export default defineConfig({
  resolve: {
    alias: [
      {
        find: /^(\.\.\/)+support\/test-database\.js$/,
        replacement: resolve(import.meta.dirname, 'test/citus/support/citus-test-database.ts'),
      },
    ],
  },
  test: {
    globalSetup: ['./test/citus/support/citus-global-setup.ts'],
    include: [
      'test/citus/**/*.test.ts',
      'test/store/storage-contract.test.ts',
      'test/store/isolation.test.ts',
      'test/store/concurrency.test.ts',
      'test/store/redaction.test.ts',
      'test/store/redaction-across-forks.test.ts',
      'test/store/retention.test.ts',
      'test/reliability/tenant-isolation.postgres.test.ts',
      'test/reliability/append-concurrency.test.ts',
      'test/reliability/redaction-residue.test.ts',
      'test/reliability/deletion-retention.test.ts',
    ],
    testNamePattern: new RegExp(`^(?!.*(?:${NOT_ON_CITUS.map(escape).join('|')}))`),
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Three servers and the tests share two cores.
    maxWorkers: 1,
    reporters: ['default'],
  },
});
