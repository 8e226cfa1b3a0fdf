/**
 * The stack's worker side: the turn and mission activities wired over the stack's services, a
 * supervised worker per task queue (the install's, the host's, the earlier shared one while it still
 * has work), a worker process's outbound channels, and the tool-call entries an earlier crash owed.
 */
import type { Client } from '@temporalio/client';
import { routingMissionNotifier } from '../activities/delivery-activities.js';
import { streamMissionNotifier } from '../activities/mission-activities.js';
import { CHANNELS } from '../channels/registry.js';
import type { AivyxConfig } from '../infra/config.js';
import { dataDirProtection } from '../infra/data-dir.js';
import { getSecret } from '../infra/secrets.js';
import type { Tracing } from '../infra/telemetry/index.js';
import { LEGACY_TASK_QUEUE, legacyQueueWork } from '../infra/temporal/index.js';
import { reconcileToolCalls } from '../infra/tool-call-log.js';
import { createConfirmations, createMissionStarts } from './confirmations.js';
import { createScheduleRecords } from './schedules.js';
import type { StackModels } from './stack-models.js';
import type { StackServices } from './stack-services.js';
import type { StackStore } from './stack-store.js';
import type { StackTemporal } from './stack-temporal.js';
import type { StackStart } from './stack-types.js';
import { wireTurnActivities } from './wiring.js';
import { createAivyxWorker, superviseWorker } from './worker.js';

/** What the worker side runs on: the phases started before it. */
export interface WorkerNeeds {
  store: StackStore;
  services: StackServices;
  temporal: StackTemporal;
  models: StackModels;
  tracing: Tracing | undefined;
}

/** Starts a supervised worker per task queue, a worker process's outbound channels, and writes owed audit entries. */
export async function startWorkers(start: StackStart, needs: WorkerNeeds): Promise<void> {
  const { config, opts, role, log, cleanups } = start;
  const { store, services, temporal, tracing } = needs;
  const activities = wireActivities(start, needs);
  // The shared queue, and the host's own queue where this machine owns the files (activities only).
  const queues = [
    { taskQueue: store.taskQueue, workflows: true },
    ...(config.hostQueue && !opts.noHostTools ? [{ taskQueue: config.hostQueue, workflows: false }] : []),
    ...((await drainsLegacyQueue(config, temporal.client, log)) ? [{ taskQueue: LEGACY_TASK_QUEUE, workflows: true }] : []),
  ];
  for (const queue of queues) {
    // A worker that gives up (rather than riding out an outage, which the SDK does) is replaced.
    const worker = await superviseWorker(
      () =>
        createAivyxWorker({
          connection: temporal.nativeConnection,
          namespace: config.namespace,
          ...queue,
          workflowCache: config.workflowCache,
          activities,
          dataConverter: store.workerDataConverter,
          ...(tracing && { tracing: tracing.worker }),
        }),
      log,
    );
    cleanups.push(() => worker.stop());
  }
  if (config.hostQueue) log(`host tools: ${opts.noHostTools ? 'not here' : 'here'} (task queue ${config.hostQueue})`);
  // A worker sends what its activities deliver (replies, gate notices, channel.send) while a gateway receives.
  if (role === 'worker') await startOutboundChannels(start, store, services);
  // Tool calls whose entry is still owed after a crash (their turn ended, the entry never came) are written now.
  const reconciled = await reconcileToolCalls(store.db.db, store.master.subkey('audit'), { write: true });
  if (reconciled.written > 0)
    log(`audit: wrote ${reconciled.written} owed tool-call entr${reconciled.written === 1 ? 'y' : 'ies'} left by an earlier crash`);
}

/** The activities every worker of this process runs: turns, missions, deliveries, schedules, host tools. */
function wireActivities({ config, opts }: StackStart, { store, services, temporal, models }: WorkerNeeds) {
  const { db, master } = store;
  const { hub, deliveries, starter, missions, mcp } = services;
  // Gate notices go to the stream hub (by mission id) and the approvers' channels.
  const notifier = routingMissionNotifier(
    deliveries,
    streamMissionNotifier((key, e) => hub.publish(key, e)),
  );
  return wireTurnActivities({
    db: db.db,
    master,
    hub,
    deliveries,
    confirmations: createConfirmations(starter),
    // Missions the assistant drafted and a person approved (mission.create).
    missionStarts: createMissionStarts(starter),
    missionControl: missions,
    schedules: createScheduleRecords(temporal.client),
    notifier,
    ...(mcp ? { mcp } : {}),
    llm: models.llm!,
    ...(models.specialistLlms ? { specialistLlms: models.specialistLlms } : {}),
    agent: {
      capabilities: config.capabilities,
      budgetMs: config.turnBudgetMs,
      confirmFirst: config.confirmFirst,
      tierPolicy: config.tierPolicy,
      taintPolicy: config.taintPolicy,
      showUntrusted: config.showUntrusted,
      mcpTools: config.mcpTools,
      trustedPlaces: config.trustedPlaces,
      prices: config.prices,
      spendBudgets: config.spendBudgets,
      historyTokens: config.historyTokens,
      specialists: config.specialists,
      ...(config.env.AIVYX_TIME_ZONE ? { timeZone: config.env.AIVYX_TIME_ZONE } : {}),
      ...(config.hostQueue ? { hostQueue: config.hostQueue } : {}),
    },
    attachmentMaxBytes: config.env.AIVYX_ATTACHMENT_MAX_BYTES,
    attachmentTtlMs: config.env.AIVYX_ATTACHMENT_TTL,
    // No host tool reaches the data directory (except its workspace) or the passphrase file below Kernel.
    protectedPaths: dataDirProtection({
      home: config.home,
      passphraseFile: opts.env.AIVYX_PASSPHRASE_FILE,
      secretFiles: [opts.env.TEMPORAL_TLS_CLIENT_KEY_PATH, opts.env.TEMPORAL_TLS_CLIENT_CERT_PATH],
    }),
  });
}

/** A worker process's sending side of each configured chat channel (replies, gate notices, channel.send). */
async function startOutboundChannels({ opts, log, cleanups }: StackStart, { storage }: StackStore, services: StackServices) {
  const { deliveries, channelState, gateTokens } = services;
  for (const channel of CHANNELS) {
    const settings = await channel.configure({ env: opts.env, secret: (name) => getSecret(storage, name) });
    if (settings === undefined) continue;
    if (!channel.outbound) {
      log(`${channel.label} cannot send from a worker (its replies need the process that received the message): run it under aivyx up`);
      continue;
    }
    const running = await channel.outbound(settings, { deliveries, storage: channelState, gateTokens, log });
    cleanups.push(() => running.stop());
    log(running.describe);
  }
}

/**
 * Whether to poll the queue every install used before queues were named after it: on our own dev server
 * (its data is this install's), with no AIVYX_TASK_QUEUE, while workflows or Schedules still use it.
 */
async function drainsLegacyQueue(config: AivyxConfig, client: Client, log: (line: string) => void): Promise<boolean> {
  if (config.taskQueue || config.temporalAddress) return false;
  const { running, schedules } = await legacyQueueWork(client);
  if (running + schedules === 0) return false;
  log(
    `also polling the earlier task queue ${LEGACY_TASK_QUEUE}: ${running} running workflow(s) and ${schedules} schedule(s) were started on it before this install's queue had its name`,
  );
  return true;
}
