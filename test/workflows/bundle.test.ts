/** The workflow-safe zone really is: the workflows bundle for the sandbox, and the zone imports no Node. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../infra/worker.js';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('workflow-safe zone', () => {
  it('bundles the workflows for the sandbox', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
    expect(bundle.code).toContain('turnWorkflow');
    expect(bundle.code).toContain('sessionWorkflow');
  }, 120_000);

  it('has no value imports of Node, I/O libraries, Temporal client/worker/activity, infra or channels', () => {
    const forbidden = /^import\s+(?!type\b)[^;]*from\s+['"](node:|fs|path|os|child_process|crypto|net|http|https|pg|kysely|@electric-sql|grammy|imapflow|nodemailer|@temporalio\/(client|worker|activity|testing)|.*\/(infra|channels|activities)\/)/m;
    const offenders = ['core', 'machines', 'workflows']
      .flatMap((d) => {
        try {
          return tsFiles(d);
        } catch {
          return [];
        }
      })
      .filter((f) => forbidden.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
