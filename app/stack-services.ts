/**
 * What the worker and the channels share once Temporal is up: the stream hub, the MCP servers, the
 * gateways that start turns and missions, the owner's skills, the channels' context, and the work that
 * runs once per install (the audit checkpoints and digest) under its lease.
 */
import type { Client } from '@temporalio/client';
import { createMcpClientPool } from '../activities/mcp/mcp-client.js';
import { DeliveryRegistry } from '../activities/delivery-activities.js';
import type { ChannelContext } from '../channels/contract.js';
import { MissionGateway } from '../channels/mission-gateway.js';
import { TurnGateway } from '../channels/turn-gateway.js';
import { createAttestor } from '../infra/attestation.js';
import { createAttachmentStore } from '../infra/attachments.js';
import { startExpirySweep } from '../infra/expiry-sweep.js';
import { createResumeRecords } from '../infra/resume-records.js';
import { createValueStore } from '../infra/value-store.js';
import { startAuditCheckpoints, startAuditDigest } from '../infra/audit/index.js';
import { createAuditPort } from '../infra/audit-port.js';
import { GateTokens, gateTokenKey } from '../infra/gate-tokens.js';
import { holdLease, type LeasedWork } from '../infra/leases.js';
import { createMissionWaits } from '../infra/mission-waits.js';
import { startPgStreamBus, type StreamBus } from '../infra/stream-bus.js';
import { StreamHub } from '../infra/stream-hub.js';
import { createSkillEditGates } from './owner-skill-edits.js';
import type { StackStore } from './stack-store.js';
import { runsChannels, runsWorker, type StackStart } from './stack-types.js';
import { ownerSkillsOf, resumeRecordsOf, sessionClearingOf } from './wiring.js';

/** What the worker and the channels of one stack share. */
export type StackServices = Awaited<ReturnType<typeof wireServices>>;

/** Starts the stream hub and the MCP servers, and builds the gateways and the channels' context over them. */
export async function wireServices({ config, opts, role, log, cleanups }: StackStart, store: StackStore, client: Client) {
  const { db, master, storage, taskQueue } = store;
  // Stream events: in this process (PGlite), or between every process of the install (PostgreSQL).
  let hub: StreamBus = new StreamHub();
  if (config.databaseUrl) {
    const bus = await startPgStreamBus({ databaseUrl: config.databaseUrl, key: master.subkey('stream') });
    cleanups.push(() => bus.stop());
    hub = bus;
  }
  // MCP servers are processes of the host: a worker without the host's tools starts none.
  const mcp =
    runsWorker(role) && !opts.noHostTools && config.mcpServers.length > 0
      ? { pool: createMcpClientPool(config.mcpServers), tierGrants: config.mcpTiers, trustHints: config.mcpTrustHints }
      : undefined;
  if (mcp) cleanups.push(() => mcp.pool.close());
  const attestor = createAttestor(master.subkey('attestation'));
  // Channels that deliver replies and gate notices themselves (Telegram, email) register here once started.
  const deliveries = new DeliveryRegistry();
  // Confirm-first in conversations: an escalated channel turn opens a confirmation mission's gate.
  const starter = { client, taskQueue, attestor, capabilities: config.capabilities, dashboard: true };
  // Missions for REST, Telegram and email approvals; our dev server and ensureNamespaceSetup register the dashboard search attributes.
  // Also the port mission.list/mission.cancel read and cancel through (whose a mission is: its verified definition).
  // Chat channels keep their state sealed in channel_state (channel state, open waits of missions).
  const channelState = storage.domain('channel_state');
  const missions = new MissionGateway({
    client,
    taskQueue,
    attestor,
    capabilities: config.capabilities,
    dashboard: true,
    // Telegram and e-mail offer what they receive to missions waiting for it (waitFor steps).
    events: { waits: createMissionWaits(channelState), store: channelState },
    // A decision the mission refuses before the worker sees it is audited where the approver was authenticated.
    audit: createAuditPort(db.db, master.subkey('audit')),
  });
  // Approval buttons and reply tokens are MACed and single use.
  const gateTokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), channelState);
  const gateway = new TurnGateway({
    client,
    taskQueue,
    attestor,
    hub,
    sessionIdleMs: config.sessionIdleMs,
    // `/clear` on every channel (docs/USING.md).
    sessions: sessionClearingOf(db.db, master, storage),
  });
  // The owner's skills (Telegram's /skills, REST's /v1/skills): an edit waits at a gate like a proposal.
  const ownerIds = config.trustedPlaces.owners ?? [];
  const skillEdits = createSkillEditGates({ ...starter, resumes: resumeRecordsOf(db.db, master, storage), owners: ownerIds });
  const ownerSkills = ownerSkillsOf(db.db, master, { capabilities: config.capabilities, tierPolicy: config.tierPolicy }, skillEdits);
  // The owner's surfaces on the chat channels (Telegram's /skills): their ids, and what only they see.
  const owner = { ids: ownerIds, skills: ownerSkills };
  const channels: ChannelContext = { gateway, deliveries, missions, gateTokens, storage: channelState, owner, log };
  // Leases between the processes of a scale-out install; `up` is the only process of its install.
  const shared = role === 'worker' || role === 'gateway' ? config.databaseUrl : undefined;
  return { hub, mcp, deliveries, starter, channelState, missions, gateTokens, gateway, ownerSkills, channels, shared };
}

/** Starts the audit checkpoints (a channels process), the audit digest and the expiry sweep (a worker), each under its lease. */
export async function startAuditJobs({ config, role, log, cleanups }: StackStart, store: StackStore, services: StackServices) {
  const { db, audit } = store;
  const { deliveries, shared } = services;
  // What runs once per install whichever process holds its lease (`up`: the only process, no lease).
  const once = async (name: string, work: LeasedWork) => {
    const lease = holdLease({ ...(shared ? { databaseUrl: shared } : {}), name, log, work });
    cleanups.push(() => lease.stop());
    await lease.settled;
  };
  // The signed checkpoints go to the witness file in the data directory of the process that signs: a
  // gateway's (it keeps its data directory; workers may be disposable).
  if (runsChannels(role))
    await once('audit-checkpoints', async () =>
      startAuditCheckpoints({
        db: db.db,
        service: audit,
        every: config.auditCheckpointEvery,
        seconds: config.auditCheckpointSeconds,
        log,
      }),
    );
  // The digest is sent by a worker: workers hold the channels' outbound side.
  if (runsWorker(role) && config.auditDigest) {
    const target = config.auditDigest;
    await once('audit-digest', async () => startAuditDigest({ service: audit, deliveries, target, log }));
  }
  // Sealed rows past their use are deleted (they are refused from the moment they expire): attachments,
  // held values, resume records whose gate can no longer be decided.
  if (runsWorker(role)) {
    const sessions = store.storage.domain('sessions');
    const kinds = [
      { what: 'attachments', ...createAttachmentStore(services.channelState, { ttlMs: config.env.AIVYX_ATTACHMENT_TTL }) },
      { what: 'held values', ...createValueStore(sessions) },
      { what: 'resume records', ...createResumeRecords(sessions) },
    ];
    await once('expiry-sweep', async () => startExpirySweep({ kinds, log }));
  }
}
