/** The workflows bundle for the sandbox (the zone's import fence itself is lint's: test/lint/folder-order.test.ts). */
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../app/worker.js';

describe('workflow-safe zone', () => {
  it('bundles the workflows for the sandbox', async () => {
    const bundle = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    expect(bundle.code).toContain('turnWorkflow');
    expect(bundle.code).toContain('sessionWorkflow');
  }, 120_000);
});
