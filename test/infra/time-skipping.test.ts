/** The time-skipping test server from the venv starts and skips time (no download involved). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { timeSkippingEnv } from '../support/temporal.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnv();
});
afterAll(async () => {
  await env?.teardown();
});

it('skips three days in well under a minute', async () => {
  expect(env.supportsTimeSkipping).toBe(true);
  const before = await env.currentTimeMs();
  const started = Date.now();
  await env.sleep('3d');
  expect(Date.now() - started).toBeLessThan(10_000);
  expect((await env.currentTimeMs()) - before).toBeGreaterThanOrEqual(3 * 24 * 3600 * 1000);
});
