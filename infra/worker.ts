/** Creating the worker: workflows bundled once per process, activities injected by the composition root. */
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** Absolute path of the workflows entry point (what the bundler and replay tests load). */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The workflow bundle, built on first use and shared by every worker of this process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
  return bundle;
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

/** Options for `createAivyxWorker`. */
export interface AivyxWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  /** Stop waiting for activities on shutdown after this long. */
  shutdownGraceTime?: string;
}

/** A worker polling the aivyx task queue with our workflows and the given activities. */
export async function createAivyxWorker(opts: AivyxWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: opts.activities,
    shutdownGraceTime: opts.shutdownGraceTime ?? '5s',
  });
}
