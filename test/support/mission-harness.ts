/**
 * A mission stack for tests on a `TestWorkflowEnvironment` (time-skipping or local): a fresh
 * PostgreSQL database, a master key, and a worker with the turn and mission activities.
 * Like turn-harness.ts, but the worker can be restarted and the environment is the caller's.
 */
import { Client } from '@temporalio/client';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import { DefaultLogger, Runtime, type NativeConnection, type Worker } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import { DeliveryRegistry, routingMissionNotifier } from '../../activities/delivery-activities.js';
import { streamMissionNotifier, type MissionNotice, type MissionNotifier } from '../../activities/mission-activities.js';
import { createScriptedProvider, type ScriptedScript } from '../../activities/llm/scripted-provider.js';
import type { AgentConfig } from '../../activities/ports.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { createAttestor, type Attestor } from '../../infra/attestation.js';
import { auditEntriesForTurn, verifyAuditChain } from '../../infra/audit/index.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { createConfirmations, createMissionStarts } from '../../app/confirmations.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { createScheduleRecords } from '../../app/schedules.js';
import { openKeyring } from '../../infra/keyring.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { wireTurnActivities } from '../../app/wiring.js';
import { createAivyxWorker } from '../../app/worker.js';
import { missionStatusQuery, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { createTestDatabase } from './postgres.js';
import { uniqueTaskQueue } from './temporal.js';
import { SHOW_ALL, TEST_KDF, TEST_PASSPHRASE } from './turn-harness.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed
}

/** Options of `startMissionHarness`. */
export interface MissionHarnessOptions {
  script: ScriptedScript;
  agent?: Partial<AgentConfig>;
  /** Channel deliverers (replies and gate notices); default none. */
  deliveries?: DeliveryRegistry;
  /** Open confirmation missions (confirm-first in conversations) with this client (`'own'`: the harness's codec client). */
  confirmWith?: Client | 'own';
  /** How far a schedule's creation may lie from its template's signature (default: production's). */
  scheduleSkewMs?: number;
  /**
   * Encrypt payloads as production does: the worker refuses what is not encrypted for the workflow
   * it arrives at, and the harness's `client` encrypts (default false: mission logic tests start
   * workflows with the environment's plain client).
   */
  codec?: { connection: Client['connection'] };
  /** Give the worker a mission control port (mission.list/mission.cancel) over the harness's codec client (needs `codec`). */
  missionControl?: boolean;
  /** Activities whose results are replaced, as a forged completion at the frontend would replace them (red-team tests). */
  forgedCompletions?: Partial<Record<keyof ReturnType<typeof wireTurnActivities>, (...args: never[]) => Promise<unknown>>>;
  /**
   * The first N calls of these activities fail as a database outage would (a retryable error), then they
   * run (fault tests). Every other failing call runs first: the write went through, its reply was lost.
   */
  outages?: Partial<Record<keyof ReturnType<typeof wireTurnActivities>, number>>;
  /** Activities wrapped around the real ones (fault tests: a worker that dies after an effect, before it reports). */
  interpose?: Partial<
    Record<
      keyof ReturnType<typeof wireTurnActivities>,
      (real: (...args: never[]) => Promise<unknown>) => (...args: never[]) => Promise<unknown>
    >
  >;
  /** Use this (empty) database instead of a fresh one on the shared server (fault tests bring their own). */
  databaseUrl?: string;
  /** The worker's workflow cache (default: the production default). */
  workflowCache?: number;
}

/** A running mission stack. */
export interface MissionHarness {
  taskQueue: string;
  /** A client with the harness's payload codec (only with the `codec` option). */
  client?: Client;
  db: Kysely<Database>;
  hub: StreamHub;
  /** The worker's attestor (channel turns submitted by a test must be attested with it). */
  attestor: Attestor;
  /** The master key (for the audit key of a reconciliation). */
  master: MasterKey;
  deliveries: DeliveryRegistry;
  /** Every notice sent to approvers, in order. */
  notices: MissionNotice[];
  /** Stops the worker (waiting for it) and starts a fresh one on the same task queue. */
  restartWorker(): Promise<void>;
  /** How many workflows the worker holds in its cache now. */
  cachedWorkflows(): number;
  /** The mission's audit events (mission events are indexed under the mission id). */
  audit(missionId: string): Promise<AuditEvent[]>;
  verify(): ReturnType<typeof verifyAuditChain>;
  stop(): Promise<void>;
}

/** Where the worker polls: a `TestWorkflowEnvironment` or the shared dev server's connection. */
export interface MissionServer {
  nativeConnection: NativeConnection;
  namespace?: string | undefined;
}

/** Starts a mission harness on `env`; call `stop()` in `afterAll`. */
export async function startMissionHarness(env: MissionServer, opts: MissionHarnessOptions): Promise<MissionHarness> {
  const pg = opts.databaseUrl ? { url: opts.databaseUrl, drop: async () => undefined } : await createTestDatabase('mission');
  const { db, close } = await openDatabase({ databaseUrl: pg.url });
  const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const taskQueue = uniqueTaskQueue('missions');
  const hub = new StreamHub();
  const notices: MissionNotice[] = [];
  const llm = createScriptedProvider(opts.script);
  const agent: AgentConfig = {
    capabilities: ['fs.read', 'fs.write', 'shell.exec', 'llm.call'],
    budgetMs: 60_000,
    confirmFirst: ['shell.exec'],
    // Results are shown to the model, as these tests were written; the held default is proven where it
    // matters (test/redteam/injection-suite.test.ts, test/activities/values.test.ts: `showUntrusted: []`).
    showUntrusted: SHOW_ALL,
    ...opts.agent,
  };
  const deliveries = opts.deliveries ?? new DeliveryRegistry();
  const attestor = createAttestor(master.subkey('attestation'));
  const client = opts.codec
    ? new Client({
        connection: opts.codec.connection,
        namespace: env.namespace ?? 'default',
        dataConverter: aivyxDataConverter(createPayloadCodec(master.subkey('payload'))),
      })
    : undefined;
  // Confirmations go through the codec client when the worker refuses unencrypted input (`confirmWith: 'own'`).
  const confirmClient = opts.confirmWith === 'own' ? client : opts.confirmWith;
  const starter = confirmClient ? { client: confirmClient, taskQueue, attestor, capabilities: agent.capabilities } : undefined;
  const confirmations = starter ? createConfirmations(starter) : undefined;
  const missionStarts = starter ? createMissionStarts(starter) : undefined;
  // As aivyx up wires it: the mission gateway is the port, reading definitions through the codec client.
  const missionControl =
    opts.missionControl && client
      ? new MissionGateway({ client, taskQueue, attestor, capabilities: agent.capabilities, dashboard: true })
      : undefined;
  const activities = wireTurnActivities({
    db,
    master,
    hub,
    llm,
    agent,
    deliveries,
    ...(confirmations ? { confirmations } : {}),
    ...(missionStarts ? { missionStarts } : {}),
    ...(missionControl ? { missionControl } : {}),
    ...(confirmClient ? { schedules: createScheduleRecords(confirmClient, opts.scheduleSkewMs) } : {}),
    notifier: recordingNotifier(notices, deliveries, hub),
  });
  // What an attacker at the frontend could do to any activity: complete it with a result of their choosing.
  Object.assign(activities, opts.forgedCompletions ?? {});
  for (const [name, wrap] of Object.entries(opts.interpose ?? {})) {
    const acts = activities as unknown as Record<string, (...args: never[]) => Promise<unknown>>;
    acts[name] = wrap(acts[name]!);
  }
  for (const [name, failures] of Object.entries(opts.outages ?? {})) {
    const acts = activities as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const real = acts[name]!;
    let left = failures;
    acts[name] = async (...args) => {
      if (left-- > 0) {
        if (left % 2 === 0) await real(...args);
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432 (a simulated database outage)');
      }
      return real(...args);
    };
  }
  const workerDataConverter = opts.codec
    ? aivyxDataConverter(createPayloadCodec(master.subkey('payload'), { unencrypted: 'refuse' }))
    : undefined;
  const start = async (): Promise<{ worker: Worker; running: Promise<void> }> => {
    const worker = await createAivyxWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      activities,
      ...(opts.workflowCache ? { workflowCache: opts.workflowCache } : {}),
      ...(workerDataConverter ? { dataConverter: workerDataConverter } : {}),
    });
    return { worker, running: worker.run() };
  };
  let current = await start();
  return {
    taskQueue,
    ...(client ? { client } : {}),
    db,
    hub,
    attestor,
    master,
    deliveries,
    notices,
    cachedWorkflows: () => current.worker.getStatus().numCachedWorkflows,
    async restartWorker() {
      current.worker.shutdown();
      await current.running;
      current = await start();
    },
    async audit(missionId) {
      return (await auditEntriesForTurn(db, missionId)).map((r) => r.event);
    },
    verify: () => verifyAuditChain(db, master.subkey('audit')),
    async stop() {
      current.worker.shutdown();
      await current.running;
      await close();
      await pg.drop();
    },
  };
}

/** The production notifier (channel deliverers, then the stream hub), recording every notice in `notices`. */
export function recordingNotifier(notices: MissionNotice[], deliveries: DeliveryRegistry, hub: StreamHub): MissionNotifier {
  const notifier = routingMissionNotifier(
    deliveries,
    streamMissionNotifier((key, e) => hub.publish(key, e)),
  );
  return {
    notify: async (n, key) => {
      notices.push(n);
      await notifier.notify(n, key);
    },
  };
}

/** The mission's gate once it is open (polls its status query; throws after about 30 s). */
export async function openGateOf(
  client: Client,
  missionId: string,
): Promise<{ gateId: string; approvers: { identity: string; channel: string }[] }> {
  const handle = client.workflow.getHandle<typeof missionWorkflow>(missionId);
  for (let i = 0; i < 300; i++) {
    try {
      const s = await handle.query(missionStatusQuery);
      if (s.gate?.state === 'open') return s.gate;
    } catch {
      // not started yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no open gate on ${missionId}`);
}
