import { configDefaults, defineConfig } from 'vitest/config';
import { SETTLE_TIMEOUT_MS } from './test/support/time-limits.js';

export default defineConfig({
  test: {
    globalSetup: ['./test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    // The Citus suite needs Citus: `npm run test:citus` (vitest.citus.config.ts).
    exclude: [...configDefaults.exclude, 'test/citus/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A poll ends when its condition holds: the limit is for one that never does, not a guess at a loaded machine.
    expect: { poll: { timeout: SETTLE_TIMEOUT_MS } },
    // Two cores: PGlite instances and the PostgreSQL server share them.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
