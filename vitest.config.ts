import { defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/unit-tests.js';

// Two projects. `unit`: tests that need no Temporal, no PostgreSQL (nor PGlite) and no network
// (loopback sockets a test opens itself are fine); no global setup, so `npm run test:unit` starts in
// a second. `integration`: everything else, against the one Temporal dev server the global setup
// starts and the real PostgreSQL. Server-backed suites share that server and one PostgreSQL on a
// 2-core machine, so their files run one at a time (tests inside a file may still overlap), and
// only after the unit files (groupOrder), so the two never compete for the cores.
const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks',
} as const;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: [...UNIT_TESTS],
          // Pure files share their workers' module cache (no fresh process per file): half the
          // CPU time. They keep no global state between files (test/lint/unit-project.test.ts).
          isolate: false,
          maxWorkers: 2,
          // Unreachable on purpose: a unit test that tries Temporal or PostgreSQL fails at once
          // instead of quietly using a server someone left running.
          env: { AIVYX_TEST_TEMPORAL_ADDRESS: '', AIVYX_TEST_PG_ADMIN_URL: 'postgres://unit-tests-have-no-database@127.0.0.1:1/none' },
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/**/*.test.ts'],
          // Fixtures are code for a copy of the repository (test/contributing), not tests of this one.
          exclude: ['test/fixtures/**', 'node_modules/**', ...UNIT_TESTS],
          fileParallelism: false,
          globalSetup: ['test/support/temporal-global-setup.ts'],
          // The workflows bundled once for the run, not once per file (test/support/workflow-bundles.ts).
          setupFiles: ['test/support/use-workflow-bundles.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
