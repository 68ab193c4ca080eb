import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: PGlite instances and the PostgreSQL server share them.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
