/**
 * Vitest globalSetup: ONE headless Temporal dev server for the whole run (starting one per
 * file would cost seconds each on a 2-core box). Its address reaches test files through
 * `inject('temporalAddress')`, with AIVYX_TEST_TEMPORAL_ADDRESS as a fallback.
 * Set AIVYX_TEST_TEMPORAL_ADDRESS beforehand to reuse a server you already run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { findTemporalCli, startDevServer } from '../../infra/temporal/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
  }
}

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Starts the shared server and returns its teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.AIVYX_TEST_TEMPORAL_ADDRESS;
  if (existing) {
    project.provide('temporalAddress', existing);
    return async () => undefined;
  }
  const home = mkdtempSync(join(tmpdir(), 'aivyx-test-temporal-'));
  const server = await startDevServer({ cliPath: findTemporalCli({ env: process.env, projectRoot }), home, headless: true });
  project.provide('temporalAddress', server.address);
  // Forks inherit the env of this process, so this reaches tests that cannot `inject`.
  process.env.AIVYX_TEST_TEMPORAL_ADDRESS = server.address;
  return async () => {
    await server.stop();
    delete process.env.AIVYX_TEST_TEMPORAL_ADDRESS;
    rmSync(home, { recursive: true, force: true });
  };
}
