/**
 * Vitest globalSetup: ONE headless Temporal dev server for the whole run (starting one per
 * file would cost seconds each on a 2-core box). Its address reaches test files through
 * `inject('temporalAddress')`, with AIVYX_TEST_TEMPORAL_ADDRESS as a fallback.
 * Set AIVYX_TEST_TEMPORAL_ADDRESS beforehand to reuse a server you already run.
 * It also bundles the workflows once for the whole run, while the server starts (workflow-bundles.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { findTemporalCli, startDevServer } from '../../infra/temporal/index.js';
import { buildWorkflowBundles, WORKFLOW_BUNDLES_ENV } from './workflow-bundles.js';

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
  const bundles = join(home, 'workflow-bundles');
  const [server, bundled] = await Promise.all([
    startDevServer({ cliPath: findTemporalCli({ env: process.env, projectRoot }), home, headless: true }),
    // Without them every process bundles for itself, as it would anyway: slower, not wrong.
    buildWorkflowBundles(bundles).then(
      () => true,
      (err: unknown) => (console.warn(`workflow bundles not prebuilt: ${String(err)}`), false),
    ),
  ]);
  project.provide('temporalAddress', server.address);
  // Forks inherit the env of this process, so this reaches tests that cannot `inject` (and their children).
  process.env.AIVYX_TEST_TEMPORAL_ADDRESS = server.address;
  if (bundled) process.env[WORKFLOW_BUNDLES_ENV] = bundles;
  return async () => {
    await server.stop();
    delete process.env.AIVYX_TEST_TEMPORAL_ADDRESS;
    delete process.env[WORKFLOW_BUNDLES_ENV];
    rmSync(home, { recursive: true, force: true });
  };
}
