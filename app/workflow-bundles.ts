/**
 * The workflow bundles of this process: built on first use (app/worker.ts), or handed over ready-made
 * by a caller that holds one built from the same inputs (bundling takes seconds; the test suite builds
 * its bundles once per run: test/support/workflow-bundles.ts). Apart from app/worker.ts so that handing
 * one over does not load the Temporal worker.
 */
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** What a bundle is built from: the workflows, and the modules compiled in with them. */
export interface WorkflowBundleInputs {
  /** Absolute path of the workflows entry point (a copy of the repository has its own). */
  workflowsPath: string;
  failureConverterPath?: string;
  tracingModules: readonly string[];
}

type Load = () => Promise<WorkflowBundleWithSourceMap>;

const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();
const provided = new Map<string, Load>();

const keyOf = (inputs: WorkflowBundleInputs): string =>
  JSON.stringify([inputs.workflowsPath, inputs.failureConverterPath ?? '', ...inputs.tracingModules]);

/** `load` gives the bundle of `inputs` if this process ever needs it: bundled elsewhere from exactly these inputs. */
export function provideWorkflowBundle(inputs: WorkflowBundleInputs, load: Load): void {
  provided.set(keyOf(inputs), load);
}

/** The bundle of `inputs`: the one provided, else `build()`'s; made once and shared by every worker of this process. */
export function cachedWorkflowBundle(inputs: WorkflowBundleInputs, build: Load): Promise<WorkflowBundleWithSourceMap> {
  const key = keyOf(inputs);
  let bundle = bundles.get(key);
  if (!bundle) {
    bundle = (provided.get(key) ?? build)();
    bundles.set(key, bundle);
  }
  return bundle;
}
