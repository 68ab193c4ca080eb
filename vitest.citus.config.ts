import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { SETTLE_TIMEOUT_MS } from './test/support/time-limits.js';

/**
 * `npm run test:citus`: the store's suites against a Citus coordinator with two workers (not part of `npm test`:
 * it needs Citus installed into PostgreSQL 15). The suites import test/support/test-database.ts; here that module is
 * test/citus/support/citus-test-database.ts, which hands them a distributed database on the coordinator; the few
 * checks that cannot run there as written are defined with `itOffCitus`, which the stand-in makes define nothing.
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
      'test/model/context-store-contract.test.ts',
      'test/store/storage-contract.test.ts',
      'test/store/isolation.test.ts',
      'test/store/user-scope.test.ts',
      'test/store/temp-table-capture.test.ts',
      'test/store/concurrency.test.ts',
      'test/store/append-batch-equivalence.test.ts',
      'test/store/redaction.test.ts',
      'test/store/content-version.test.ts',
      'test/store/search-version.test.ts',
      'test/store/rebuild-derived-data.test.ts',
      'test/store/search-indexing.test.ts',
      'test/store/search-background.test.ts',
      'test/store/redaction-across-forks.test.ts',
      'test/store/retention.test.ts',
      'test/store/generated-title-redaction.test.ts',
      'test/store/stream-chunk-log-cleanup.test.ts',
      'test/store/tool-payloads.test.ts',
      'test/store/memory.test.ts',
      'test/reliability/append-concurrency.test.ts',
      'test/reliability/redaction-residue.test.ts',
      'test/reliability/deletion-retention.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    expect: { poll: { timeout: SETTLE_TIMEOUT_MS } },
    // Three servers and the tests share two cores.
    maxWorkers: 1,
    reporters: ['default'],
  },
});
