/**
 * The whole assistant on one machine: database, keys, Temporal (a dev server unless
 * TEMPORAL_ADDRESS is set), the worker and the local REST channel. `aivyx up` runs it until
 * stopped, watching its dependencies (the dev server is restarted when it dies, and given up on when
 * it cannot come back; /v1/health says what is down); `aivyx chat --standalone` runs it for one
 * conversation. Every port it will bind is checked before anything starts; the install's identity
 * names its task queue and claims its Temporal namespace, refusing one another install holds.
 *
 * Outgrowing one machine (docs/DEPLOY.md), the same stack runs in one of two roles against a real
 * cluster and PostgreSQL: `worker` (workflows and activities, no channel listens) and `gateway`
 * (REST, the chat channels, the codec server; no worker). Many of each may run: what must run once
 * (a Telegram poller, an IMAP reader, the audit checkpointer) runs under a PostgreSQL lease
 * (infra/leases.ts), and stream events reach the gateway over LISTEN/NOTIFY (infra/stream-bus.ts).
 *
 * Its phases, in the order they start: app/stack-preflight.ts, stack-store.ts (database, keys, audit),
 * stack-models.ts, stack-temporal.ts, stack-services.ts, stack-worker.ts, stack-channels.ts.
 */
import { mkdirSync } from 'node:fs';
import { CHANNELS } from '../channels/registry.js';
import type { AivyxError } from '../core/errors.js';
import { Health } from '../infra/health.js';
import { lockHome, type HomeLock } from '../infra/home-lock.js';
import { assertPortsFree } from '../infra/port-check.js';
import { startTracing, tracingSettingsFromEnv } from '../infra/telemetry/index.js';
import { stopLeftoverDevServer } from '../infra/temporal/index.js';
import { workspaceDir } from '../infra/tier-policy.js';
import { startChatChannels, startRestAndApp, type ListeningAt } from './stack-channels.js';
import { settleModels } from './stack-models.js';
import { checkRole, portsToBind } from './stack-preflight.js';
import { startAuditJobs, wireServices } from './stack-services.js';
import { openStore } from './stack-store.js';
import { startTemporal, watchDependencies, type StackTemporal } from './stack-temporal.js';
import { runsChannels, runsWorker, type Cleanup, type Stack, type StackOptions, type StackStart } from './stack-types.js';
import { startWorkers } from './stack-worker.js';
export { codecToken, restToken } from '../infra/home-tokens.js';
export { installTaskQueue, type Stack, type StackOptions, type StackRole } from './stack-types.js';

/** Starts the stack; on failure everything already started is stopped again. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const { config } = opts;
  const role = opts.role ?? 'up';
  const log = opts.log ?? (() => undefined);
  checkRole(config, role, opts.noHostTools ?? false);
  // The channels' own settings are checked before anything opens (the secrets they name are read later).
  for (const channel of CHANNELS) channel.check?.(opts.env);
  mkdirSync(config.home, { recursive: true, mode: 0o700 });
  mkdirSync(workspaceDir(config.home), { recursive: true, mode: 0o700 });
  // One `up` per data directory; the scale-out roles run many per install and keep nothing there but tokens.
  const lock = role === 'worker' || role === 'gateway' ? undefined : lockHome(config.home, role);
  const cleanups: Cleanup[] = [() => lock?.release()];
  let fail: (err: AivyxError) => void = () => undefined;
  const failed = new Promise<AivyxError>((resolve) => (fail = resolve));
  const stop = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch {
        // keep stopping the rest
      }
    }
  };
  try {
    return await startPhases({ config, opts, role, log, cleanups }, lock, { failed, fail: (err) => fail(err), stop });
  } catch (err) {
    await stop();
    throw err;
  }
}

/** How the stack ends: the promise that settles if it cannot go on, its settling, and stopping it. */
interface StackEnding {
  failed: Promise<AivyxError>;
  fail: (err: AivyxError) => void;
  stop: () => Promise<void>;
}

/** Starts every phase in order, each pushing its stops onto the cleanups; what it returns is the running stack. */
async function startPhases(start: StackStart, lock: HomeLock | undefined, { failed, fail, stop }: StackEnding): Promise<Stack> {
  const { config, opts, role, log, cleanups } = start;
  // A dev server left by a previous owner that died must be gone before ours binds its port and file.
  if (!config.temporalAddress && lock?.previous?.devServerPid) await stopLeftoverDevServer(lock.previous.devServerPid, config.home);
  // Every port is checked before anything opens or starts: a taken one is named with its setting.
  await assertPortsFree(portsToBind(config, role, opts), { then: 'nothing was started' });
  // Traces (docs/OBSERVABILITY.md), when an OTLP endpoint is set; stopped last, so it flushes the worker's spans.
  const tracingSettings = tracingSettingsFromEnv(opts.env);
  const tracing = tracingSettings && startTracing(tracingSettings, { role: opts.role ?? 'up' });
  if (tracing) cleanups.push(() => tracing.shutdown());
  const health = new Health(log);
  const store = await openStore(start, health);
  const models = await settleModels(start, store.storage);

  const listening: ListeningAt = {};
  // What other commands find in running.json; republished when the dev server gets a new pid. Nothing
  // is published before the REST channel listens, which is after Temporal has started.
  const publish = () => {
    if (listening.url)
      lock?.publish({
        restUrl: listening.url,
        ...(listening.appUrl ? { appUrl: listening.appUrl } : {}),
        temporalAddress: temporal.address,
        ...(temporal.devServer ? { devServerPid: temporal.devServer.current().pid } : {}),
        ...(temporal.uiUrl ? { uiUrl: temporal.uiUrl } : {}),
      });
  };
  const temporal: StackTemporal = await startTemporal(start, { health, store, tracing, fail, devServerRestarted: publish });
  watchDependencies(start, health, temporal.connection, store.db);
  const services = await wireServices(start, store, temporal.client);
  await startAuditJobs(start, store, services);
  if (runsWorker(role)) await startWorkers(start, { store, services, temporal, models, tracing });

  const { address, uiUrl, client } = temporal;
  const common = { temporalAddress: address, installId: store.installId, taskQueue: store.taskQueue, uiUrl, client, health, failed, stop };
  if (!runsChannels(role)) return { ...common, restUrl: undefined, restToken: '', appUrl: undefined, codecUrl: undefined };
  const channelNeeds = { health, store, services, temporal };
  await startChatChannels(start, channelNeeds);
  const token = await startRestAndApp(start, channelNeeds, listening);
  publish();
  return { ...common, restUrl: listening.url, restToken: token, appUrl: listening.appUrl, codecUrl: temporal.codecServer?.url };
}
