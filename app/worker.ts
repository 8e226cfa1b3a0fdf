/** Creating the worker: workflows bundled once per process, activities injected by the composition root. */
import { setTimeout as delay } from 'node:timers/promises';
import type { DataConverter } from '@temporalio/common';
import {
  bundleWorkflowCode,
  Worker,
  type BundleOptions,
  type NativeConnection,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { DEFAULT_WORKFLOW_CACHE } from '../infra/config/env-table.js';
import { sibling } from '../infra/module-path.js';
import type { WorkerTracing } from '../infra/telemetry/index.js';
import { cachedWorkflowBundle, type WorkflowBundleInputs } from './workflow-bundles.js';

/** Absolute path of the workflows entry point (what the bundler and replay tests load). */
export const WORKFLOWS_PATH = sibling(import.meta.url, '../workflows/index');

/** The workflow interceptors every aivyx workflow runs with (refused payloads become clean failures). */
export const WORKFLOW_INTERCEPTORS_PATH = sibling(import.meta.url, '../workflows/interceptors');

/**
 * zod set up for the sandbox (see there): preloading it preloads the zod our workflow code imports
 * (its ESM build; the bundle's preload list is `require`d, and `'zod'` there would load zod's CommonJS
 * build, a second copy nothing uses). XState resolves to the same build either way.
 */
export const SANDBOX_ZOD_PATH = sibling(import.meta.url, '../workflows/sandbox-zod');

/** Every workflow module, evaluated once per worker thread and shared by its workflows (see there). */
export const SANDBOX_SHARED_PATH = sibling(import.meta.url, '../workflows/sandbox-shared');

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

/** What the bundler is given for `inputs` (the test suite bundles with it once per run: test/support/workflow-bundles.ts). */
export function workflowBundleOptions(inputs: WorkflowBundleInputs): BundleOptions {
  return {
    workflowsPath: inputs.workflowsPath,
    workflowInterceptorModules: [...inputs.tracingModules, WORKFLOW_INTERCEPTORS_PATH],
    preloadModules: [SANDBOX_ZOD_PATH, 'xstate', SANDBOX_SHARED_PATH],
    logger: quietLogger,
    ...(inputs.failureConverterPath ? { failureConverterPath: inputs.failureConverterPath } : {}),
  };
}

/** The inputs of our workflows' bundle: the failure converter and tracing modules are compiled into it. */
export function workflowBundleInputs(failureConverterPath?: string, tracingModules: readonly string[] = []): WorkflowBundleInputs {
  return { workflowsPath: WORKFLOWS_PATH, tracingModules, ...(failureConverterPath ? { failureConverterPath } : {}) };
}

/** The workflow bundle, built on first use (unless provided: app/workflow-bundles.ts) and shared by every worker of this process. */
export function workflowBundle(
  failureConverterPath?: string,
  tracingModules: readonly string[] = [],
): Promise<WorkflowBundleWithSourceMap> {
  const inputs = workflowBundleInputs(failureConverterPath, tracingModules);
  return cachedWorkflowBundle(inputs, () => bundleWorkflowCode(workflowBundleOptions(inputs)));
}

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
  /** false: activities only (a host queue runs no workflows). Default true. */
  workflows?: boolean;
  /** Workflows kept in memory (default {@link DEFAULT_WORKFLOW_CACHE}); the others replay from history on their next task. */
  workflowCache?: number;
  /** Traces (infra/telemetry): interceptors, the workflow span sink and the bundle's tracing modules. */
  tracing?: WorkerTracing;
}

/** A worker polling the aivyx task queue with our workflows and the given activities. */
export async function createAivyxWorker(opts: AivyxWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(opts.workflows === false
      ? {}
      : {
          workflowBundle: await workflowBundle(opts.dataConverter?.failureConverterPath, opts.tracing?.workflowModules),
          maxCachedWorkflows: opts.workflowCache ?? DEFAULT_WORKFLOW_CACHE,
        }),
    activities: opts.activities,
    ...(opts.tracing ? { interceptors: { activity: opts.tracing.activityInterceptors }, sinks: opts.tracing.sinks } : {}),
    ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}),
    shutdownGraceTime: opts.shutdownGraceTime ?? '5s',
  });
}

/** A worker that is replaced when it fails (a fatal poll error, a lost connection it cannot recover). */
export interface SupervisedWorker {
  /** The worker running now. */
  current(): Worker;
  /** Shuts the current worker down and stops replacing it. */
  stop(): Promise<void>;
}

const WORKER_RESTART_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/**
 * Runs `create()`'s worker and, should its `run()` end while we did not ask it to, says so and
 * creates another (with backoff while creation fails). The SDK's own connection already
 * reconnects through a server restart; this covers a worker that gave up.
 */
export async function superviseWorker(create: () => Promise<Worker>, log: (line: string) => void): Promise<SupervisedWorker> {
  let worker = await create();
  let stopping = false;
  const stopped = new AbortController();
  const loop = (async () => {
    for (let attempt = 0; ;) {
      try {
        await worker.run();
        if (stopping) return;
        log('the worker stopped by itself; starting a new one');
      } catch (err) {
        if (stopping) return;
        log(`the worker failed (${err instanceof Error ? err.message : String(err)}); starting a new one`);
      }
      for (;;) {
        await delay(WORKER_RESTART_BACKOFF_MS[Math.min(attempt++, WORKER_RESTART_BACKOFF_MS.length - 1)]!, undefined, {
          signal: stopped.signal,
        }).catch(() => undefined);
        if (stopping) return;
        try {
          worker = await create();
          attempt = 0;
          log('a new worker is polling');
          break;
        } catch (err) {
          log(`cannot start a worker yet (${err instanceof Error ? err.message : String(err)}); retrying`);
        }
      }
    }
  })();
  return {
    current: () => worker,
    stop: async () => {
      stopping = true;
      stopped.abort();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await loop;
    },
  };
}
