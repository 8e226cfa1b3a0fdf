/**
 * The stack's channels side: every configured chat channel (each under its lease in a gateway), the
 * REST channel and, unless headless, the owner's app in front of it.
 */
import { startAppServer } from '../channels/app/index.js';
import { CHANNELS } from '../channels/registry.js';
import { startRestServer } from '../channels/rest/rest-server.js';
import { createAttachmentStore } from '../infra/attachments.js';
import { createAuditPort } from '../infra/audit-port.js';
import type { Health } from '../infra/health.js';
import { restToken } from '../infra/home-tokens.js';
import { createInbox } from '../infra/inbox.js';
import { holdLease } from '../infra/leases.js';
import { portTakenError } from '../infra/port-check.js';
import { getSecret } from '../infra/secrets.js';
import { createOwnerSpecialists } from './owner-specialists.js';
import { restPortOf } from './stack-preflight.js';
import type { StackServices } from './stack-services.js';
import type { StackStore } from './stack-store.js';
import type { StackTemporal } from './stack-temporal.js';
import type { StackStart } from './stack-types.js';
import { ownerMemoryOf } from './wiring.js';

/** Where the channels listen, filled in as each starts (what running.json publishes). */
export interface ListeningAt {
  url?: string;
  appUrl?: string;
}

/** What the channels side runs on: the phases started before it. */
export interface ChannelNeeds {
  health: Health;
  store: StackStore;
  services: StackServices;
  temporal: Pick<StackTemporal, 'address' | 'uiUrl' | 'client'>;
}

/** Every chat channel the registry knows that is configured, each under its lease. */
export async function startChatChannels({ opts, log, cleanups }: StackStart, { health, store, services }: ChannelNeeds): Promise<void> {
  // Every chat channel the registry knows that is configured (Telegram: a bot token secret; email: AIVYX_EMAIL_ADDRESS),
  // each under its lease: with several gateways exactly one polls, and another takes over when it dies.
  for (const channel of CHANNELS) {
    const settings = await channel.configure({ env: opts.env, secret: (name) => getSecret(store.storage, name) });
    if (settings === undefined) continue;
    health.register(`channel:${channel.name}`, { label: channel.label, kind: 'Channel', hint: 'see the log above' });
    const lease = await leaseChannel(services.shared, channel.name, log, async () => {
      const running = await channel.start(settings, services.channels);
      log(running.describe);
      return running;
    });
    cleanups.push(() => lease.stop());
  }
}

/** Starts the REST channel and (unless headless) the owner's app; returns the REST channel's token. */
export async function startRestAndApp(start: StackStart, needs: ChannelNeeds, listening: ListeningAt): Promise<string> {
  const { config, opts, cleanups } = start;
  const { health, store, services, temporal } = needs;
  const { db, master, storage, audit } = store;
  const token = restToken(config.home);
  const restPort = restPortOf(config, opts);
  const restServer = await startRestServer({
    gateway: services.gateway,
    token,
    port: restPort.port,
    audit,
    missions: services.missions,
    memory: ownerMemoryOf(db.db, master, { capabilities: config.capabilities, tierPolicy: config.tierPolicy }),
    skills: services.ownerSkills,
    specialists: createOwnerSpecialists({
      client: temporal.client,
      taskQueue: store.taskQueue,
      audit: createAuditPort(db.db, master.subkey('audit')),
      capabilities: config.capabilities,
      tierPolicy: config.tierPolicy,
    }),
    inbox: createInbox(storage.domain('sessions')),
    attachments: createAttachmentStore(services.channelState, { ttlMs: config.env.AIVYX_ATTACHMENT_TTL }),
    health,
    info: { temporalUi: temporal.uiUrl ?? null, temporalAddress: temporal.address },
  }).catch((err: unknown) => {
    // Taken since the check at start (another program was quicker): the same refusal, naming the setting.
    throw portTakenError(err, restPort) ?? err;
  });
  cleanups.push(() => restServer.stop());
  health.register('channel:rest', { label: `the REST channel at ${restServer.url}`, kind: 'Channel', hint: 'restart aivyx up' });
  listening.url = restServer.url;
  // The owner's app in a browser (docs/APP.md): pages in front of this REST channel, behind a sign-in.
  if (!opts.headless) {
    const appPort = { port: config.appPort, setting: 'AIVYX_APP_PORT', what: "the owner's app" };
    const appServer = await startAppServer({
      rest: { url: restServer.url, token },
      port: appPort.port,
      timeZone: opts.env.AIVYX_TIME_ZONE ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    }).catch((err: unknown) => {
      throw portTakenError(err, appPort) ?? err;
    });
    cleanups.push(() => appServer.stop());
    listening.appUrl = appServer.url;
  }
  return token;
}

/**
 * Runs a channel: in `up` at once (a start that fails, say a bad token, fails the stack); in a gateway
 * whenever it holds the channel's lease (a failed start is logged and tried again).
 */
async function leaseChannel(
  databaseUrl: string | undefined,
  name: string,
  log: (line: string) => void,
  start: () => Promise<{ stop(): Promise<void> }>,
): Promise<{ stop(): Promise<void> }> {
  if (!databaseUrl) return start();
  const lease = holdLease({ databaseUrl, name: `channel:${name}`, log, work: start });
  await lease.settled;
  return lease;
}
