import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    // The Citus suite needs Citus: `npm run test:citus` (vitest.citus.config.ts).
    exclude: [...configDefaults.exclude, 'test/citus/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: PGlite instances and the PostgreSQL server share them.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
