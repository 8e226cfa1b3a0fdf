import { defineConfig } from 'vitest/config';

// Server-backed suites share one Temporal dev server and one PostgreSQL on a 2-core
// machine, so files run one at a time; tests inside a file may still overlap.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fixtures are code for a copy of the repository (test/contributing), not tests of this one.
    exclude: ['test/fixtures/**', 'node_modules/**'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/support/temporal-global-setup.ts'],
  },
});
