/**
 * The workflow bundles, built once per test run instead of once per process: bundling takes seconds,
 * and every test file's worker, every worker child and every `aivyx up` or `--standalone` stack a test
 * starts would otherwise bundle the same sources again. The global setup builds them into the
 * directory named by AIVYX_TEST_WORKFLOW_BUNDLES; use-workflow-bundles.ts hands them to
 * app/workflow-bundles.ts in each test file (setupFiles) and in each process tests start.
 *
 * A bundle is used only where its inputs are exactly the process's own (app/worker.ts
 * `workflowBundleInputs`): other modules compiled in, or another copy of the repository (the
 * CONTRIBUTING walkthroughs), and that process bundles for itself as before.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { provideWorkflowBundle, type WorkflowBundleInputs } from '../../app/workflow-bundles.js';

/** The environment variable naming the directory of this run's bundles. */
export const WORKFLOW_BUNDLES_ENV = 'AIVYX_TEST_WORKFLOW_BUNDLES';

/** One bundle in the directory's manifest.json. */
interface BundleEntry {
  inputs: WorkflowBundleInputs;
  /** Its JSON file (`{ code, sourceMap }`), relative to the directory. */
  file: string;
}

/**
 * Builds into `dir` the bundles tests' workers use: with the aivyx failure converter (every worker
 * with the payload codec, as in production) and without (a harness with `codec: false`).
 */
export async function buildWorkflowBundles(dir: string): Promise<void> {
  // Loaded here only: the preload side of this module must stay light (it runs before every `aivyx` command).
  const [{ bundleWorkflowCode }, { workflowBundleInputs, workflowBundleOptions }, { FAILURE_CONVERTER_PATH }] = await Promise.all([
    import('@temporalio/worker'),
    import('../../app/worker.js'),
    import('../../infra/codec/index.js'),
  ]);
  mkdirSync(dir, { recursive: true });
  const entries: BundleEntry[] = [];
  for (const [i, inputs] of [workflowBundleInputs(FAILURE_CONVERTER_PATH), workflowBundleInputs()].entries()) {
    const bundle = await bundleWorkflowCode(workflowBundleOptions(inputs));
    const file = `bundle-${i}.json`;
    writeFileSync(join(dir, file), JSON.stringify(bundle));
    entries.push({ inputs, file });
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(entries));
}

/** Provides this run's bundles to app/workflow-bundles.ts (read from disk only when a worker asks for one). */
export function useWorkflowBundles(env: NodeJS.ProcessEnv = process.env): void {
  const dir = env[WORKFLOW_BUNDLES_ENV];
  if (!dir) return;
  let entries: BundleEntry[];
  try {
    entries = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as BundleEntry[];
  } catch {
    return; // a run that is over (its directory removed): bundle as usual
  }
  for (const { inputs, file } of entries) {
    provideWorkflowBundle(inputs, async () => JSON.parse(await readFile(join(dir, file), 'utf8')) as WorkflowBundleWithSourceMap);
  }
}
