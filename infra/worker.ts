/** Creating the worker: workflows bundled once per process, activities injected by the composition root. */
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** Absolute path of the workflows entry point (what the bundler and replay tests load). */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The workflow interceptors every aivyx workflow runs with (refused payloads become clean failures). */
export const WORKFLOW_INTERCEPTORS_PATH = fileURLToPath(new URL('../workflows/interceptors.ts', import.meta.url));

// Keyed by failure converter path: the sandbox's failure converter is compiled into the bundle.
const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();

/** The workflow bundle, built on first use and shared by every worker of this process. */
export function workflowBundle(failureConverterPath?: string): Promise<WorkflowBundleWithSourceMap> {
  const key = failureConverterPath ?? '';
  let bundle = bundles.get(key);
  if (!bundle) {
    bundle = bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_PATH], logger: quietLogger, ...(failureConverterPath ? { failureConverterPath } : {}) });
    bundles.set(key, bundle);
  }
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
  /** Payload codec and failure converter (the aivyx one encrypts); the SDK default when absent. */
  dataConverter?: DataConverter;
}

/** A worker polling the aivyx task queue with our workflows and the given activities. */
export async function createAivyxWorker(opts: AivyxWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: await workflowBundle(opts.dataConverter?.failureConverterPath),
    activities: opts.activities,
    ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}),
    shutdownGraceTime: opts.shutdownGraceTime ?? '5s',
  });
}
