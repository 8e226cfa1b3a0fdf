/**
 * A worker in its own process, so a test can SIGKILL it mid-turn and start another.
 * Env: DATABASE_URL, AIVYX_TEST_TEMPORAL_ADDRESS, AIVYX_TASK_QUEUE, AIVYX_SCRIPT (JSON file), AIVYX_SPECIALISTS (JSON); traces
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set (flushed when SIGTERM stops the worker).
 */
// First: this test run's workflow bundles, so this worker does not bundle them again.
import './use-workflow-bundles.js';
import { readFileSync } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import { openDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { startTracing, tracingSettingsFromEnv } from '../../infra/telemetry/index.js';
import { wireTurnActivities } from '../../app/wiring.js';
import { createAivyxWorker } from '../../app/worker.js';
import { parseSpecialists } from '../../core/specialists.js';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';
import { TEST_KDF, TEST_PASSPHRASE } from './turn-harness.js';

const env = process.env;
const tracingSettings = tracingSettingsFromEnv(env);
const tracing = tracingSettings && startTracing(tracingSettings, { role: 'worker' });
const { db } = await openDatabase({ databaseUrl: env.DATABASE_URL ?? '' });
const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
const llm = createScriptedProvider(JSON.parse(readFileSync(env.AIVYX_SCRIPT ?? '', 'utf8')));
const activities = wireTurnActivities({
  db,
  master,
  hub: new StreamHub(),
  llm,
  agent: {
    capabilities: ['fs.read', 'fs.write', 'shell.exec', 'agent.delegate'],
    specialists: env.AIVYX_SPECIALISTS ? parseSpecialists(env.AIVYX_SPECIALISTS) : [],
    budgetMs: 120_000,
    confirmFirst: [],
    showUntrusted: TOOL_CATALOG.map((t) => t.id),
  },
});
const connection = await NativeConnection.connect({ address: env.AIVYX_TEST_TEMPORAL_ADDRESS ?? '' });
const dataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload')));
const worker = await createAivyxWorker({
  connection,
  namespace: 'default',
  taskQueue: env.AIVYX_TASK_QUEUE ?? '',
  activities,
  dataConverter,
  ...(tracing && { tracing: tracing.worker }),
});
process.once('SIGTERM', () => worker.shutdown());
const running = worker.run();
process.stdout.write('worker ready\n');
await running;
await tracing?.shutdown();
await connection.close();
