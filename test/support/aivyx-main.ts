/**
 * `aivyx` from its sources as tests start it (test/support/cli-process.ts): app/main.ts, with this test
 * run's workflow bundles provided first (use-workflow-bundles.ts), so a stack's worker does not bundle
 * them again. An entry script rather than an `--import`: worker threads inherit `--import`s.
 */
import './use-workflow-bundles.js';
import '../../app/main.js';
