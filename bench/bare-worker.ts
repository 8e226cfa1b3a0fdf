/** A worker for the baselines: bench-workflows.ts and no-op activities, SDK defaults, nothing of ours. */
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** A worker on `taskQueue` running the baseline workflows with `activities`. */
export async function bareWorker(connection: NativeConnection, taskQueue: string, activities: object): Promise<Worker> {
  bundle ??= bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./bench-workflows.ts', import.meta.url)), logger: quiet });
  return Worker.create({ connection, taskQueue, workflowBundle: await bundle, activities });
}
