/**
 * This test run's workflow bundles for the process that imports it (test/support/workflow-bundles.ts):
 * every integration test file first (vitest.config.ts `setupFiles`), and the processes tests start
 * (aivyx-main.ts, worker-process.ts).
 */
import { useWorkflowBundles } from './workflow-bundles.js';

useWorkflowBundles();
