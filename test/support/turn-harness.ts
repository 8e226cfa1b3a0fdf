/**
 * A real stack for integration tests: a fresh PostgreSQL database, a master key, a worker on
 * its own task queue of the shared dev server, and helpers to run turns and read the audit log.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, type Worker } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import { createScriptedProvider, type ScriptedScript } from '../../activities/llm/scripted-provider.js';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import type { AgentConfig } from '../../activities/ports.js';
import type { ToolImplementation } from '../../activities/tools/tool-implementation.js';
import { buildTurnRequest, submitTurn, awaitTurnOutcome } from '../../channels/turn-client.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { ChannelFacts, TurnRequest } from '../../core/channel.js';
import type { AuditEvent } from '../../core/audit-events.js';
import type { TrustTier } from '../../core/capability/index.js';
import { textContent } from '../../core/message.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { createAttestor, type Attestor } from '../../infra/attestation.js';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import { auditEntriesForTurn, verifyAuditChain } from '../../infra/audit/index.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { StreamHub, type ChannelEvent } from '../../infra/stream-hub.js';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { sessionClearingOf, wireTurnActivities, type WiringInput } from '../../app/wiring.js';
import { createAivyxWorker } from '../../app/worker.js';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';
import { createConfirmations, createMissionStarts } from '../../app/confirmations.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { createTestDatabase } from './postgres.js';
import { testConnection, uniqueTaskQueue } from './temporal.js';

// Worker and activity logs at INFO drown test output; warnings and errors still show.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed by another helper in this process
}

/** Every tool: its untrusted results are shown to the model (`AIVYX_SHOW_UNTRUSTED`). */
export const SHOW_ALL: string[] = TOOL_CATALOG.map((t) => t.id);

/** Fast key derivation for tests; the production defaults are proven in the key-schedule tests. */
export const TEST_KDF = { m: 256, t: 1, p: 1 };
export const TEST_PASSPHRASE = 'correct horse battery staple';

/** Options of `startHarness`. */
export interface HarnessOptions {
  script?: ScriptedScript;
  llm?: LlmProvider;
  agent?: Partial<AgentConfig>;
  tools?: readonly ToolImplementation[];
  /** Specialists' own models, by specialist name (wiring's `specialistLlms`). */
  specialistLlms?: WiringInput['specialistLlms'];
  /** MCP servers for the worker (wiring's `mcp`). */
  mcp?: WiringInput['mcp'];
  /** Channel deliverers for `deliverReply` (default: an empty registry, exposed as `deliveries`). */
  deliveries?: DeliveryRegistry;
  /** Encrypt payloads as production does (default); `false` only for tests that need plaintext histories. */
  codec?: boolean;
  /** Use this (empty) database instead of a fresh one on the shared server (fault tests bring their own). */
  databaseUrl?: string;
  /**
   * `mission.create` starts real missions on this worker, and a chat turn that asks for approval opens
   * its confirmation (decide it with `missions.decideAs`); default: neither.
   */
  missions?: boolean;
  /** What no host tool may reach (infra/data-dir.ts `dataDirProtection`); default nothing. */
  protectedPaths?: WiringInput['protectedPaths'];
  /** The largest file `fs.attach` hands over (default core/attachments.ts). */
  attachmentMaxBytes?: number;
  /** Sessions close after this long without a message (default: a day). */
  sessionIdleMs?: number;
}

/** A running test stack. */
export interface Harness {
  /** Decides gates as a verified person (with `missions: true`). */
  missions: MissionGateway | undefined;
  client: Client;
  taskQueue: string;
  db: Kysely<Database>;
  databaseUrl: string;
  master: MasterKey;
  attestor: Attestor;
  hub: StreamHub;
  deliveries: DeliveryRegistry;
  gateway: TurnGateway;
  worker: Worker;
  /** Channel facts for a tier (attested by the harness's attestor unless told otherwise). */
  facts(tier: TrustTier, overrides?: Partial<ChannelFacts>): ChannelFacts;
  /** Runs a message as a turn through its session and returns the outcome plus the events heard. */
  turn(
    text: string,
    opts?: { tier?: TrustTier; sessionId?: string; messageId?: string; onEvent?: (e: ChannelEvent) => void },
  ): Promise<{ turnId: string; outcome: TurnOutcome; events: ChannelEvent[] }>;
  /** Starts `turnWorkflow` directly with an arbitrary (maybe forged) request. */
  rawTurn(req: TurnRequest): Promise<TurnOutcome>;
  audit(turnId: string): Promise<AuditEvent[]>;
  verify(): ReturnType<typeof verifyAuditChain>;
  stop(): Promise<void>;
}

/** Starts a harness; call `stop()` in `afterAll`. */
export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const pg = opts.databaseUrl ? { url: opts.databaseUrl, drop: async () => undefined } : await createTestDatabase('turn');
  const { db, close } = await openDatabase({ databaseUrl: pg.url });
  const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const shared = await testConnection();
  const { connection, namespace } = shared;
  // The shared client has no codec; an encrypting harness needs its own client on the same connection.
  const dataConverter = opts.codec !== false ? aivyxDataConverter(createPayloadCodec(master.subkey('payload'))) : undefined;
  // The worker refuses what is not encrypted for the workflow it arrives at, as in production.
  const workerDataConverter =
    opts.codec !== false ? aivyxDataConverter(createPayloadCodec(master.subkey('payload'), { unencrypted: 'refuse' })) : undefined;
  const client = dataConverter ? new Client({ connection: shared.client.connection, namespace, dataConverter }) : shared.client;
  const taskQueue = uniqueTaskQueue('turns');
  const hub = new StreamHub();
  const llm = opts.llm ?? createScriptedProvider(opts.script ?? { rules: [{ steps: [{ say: 'hello' }] }] });
  const agent: AgentConfig = {
    capabilities: ['fs.read', 'fs.write', 'fs.metadata', 'shell.exec', 'llm.call', 'memory.read', 'memory.write'],
    budgetMs: 60_000,
    confirmFirst: [],
    // Results are shown to the model, as these tests were written; a test of the held default (the
    // product's) says `showUntrusted: []` (docs/SECURITY.md, "The value model").
    showUntrusted: SHOW_ALL,
    ...opts.agent,
  };
  const deliveries = opts.deliveries ?? new DeliveryRegistry();
  const attestor = createAttestor(master.subkey('attestation'));
  const starter = { client, taskQueue, attestor, capabilities: agent.capabilities };
  const activities = wireTurnActivities({
    db,
    master,
    hub,
    llm,
    agent,
    deliveries,
    ...(opts.tools ? { tools: opts.tools } : {}),
    ...(opts.mcp ? { mcp: opts.mcp } : {}),
    ...(opts.specialistLlms ? { specialistLlms: opts.specialistLlms } : {}),
    ...(opts.protectedPaths ? { protectedPaths: opts.protectedPaths } : {}),
    ...(opts.attachmentMaxBytes ? { attachmentMaxBytes: opts.attachmentMaxBytes } : {}),
    ...(opts.missions ? { missionStarts: createMissionStarts(starter), confirmations: createConfirmations(starter) } : {}),
  });
  const worker = await createAivyxWorker({
    connection,
    namespace,
    taskQueue,
    activities,
    ...(workerDataConverter ? { dataConverter: workerDataConverter } : {}),
  });
  const running = worker.run();
  const gateway = new TurnGateway({
    client,
    taskQueue,
    attestor,
    hub,
    ...(opts.sessionIdleMs ? { sessionIdleMs: opts.sessionIdleMs } : {}),
    sessions: sessionClearingOf(db, master),
  });

  const facts = (tier: TrustTier, overrides: Partial<ChannelFacts> = {}): ChannelFacts => ({
    name: 'test',
    platform: tier === 'Trusted' ? 'Local' : 'Telegram',
    trustTier: tier,
    sessionId: `s-${randomUUID()}`,
    sender: 'tester',
    ...overrides,
  });

  return {
    missions: opts.missions ? new MissionGateway(starter) : undefined,
    client,
    taskQueue,
    db,
    databaseUrl: pg.url,
    master,
    attestor,
    hub,
    deliveries,
    gateway,
    worker,
    facts,
    async turn(text, o = {}) {
      const channel = facts(o.tier ?? 'Trusted', o.sessionId ? { sessionId: o.sessionId } : {});
      const message = { id: o.messageId ?? randomUUID(), sessionId: channel.sessionId, content: textContent(text), receivedAt: Date.now() };
      const events: ChannelEvent[] = [];
      const t = await gateway.start(channel, message, (e) => {
        events.push(e);
        o.onEvent?.(e);
      });
      return { turnId: t.turnWorkflowId, outcome: await t.outcome, events };
    },
    async rawTurn(req) {
      await client.workflow.start('turnWorkflow', { workflowId: req.turnId, taskQueue, args: [req] });
      return awaitTurnOutcome(client, req.turnId);
    },
    async audit(turnId) {
      return (await auditEntriesForTurn(db, turnId)).map((r) => r.event);
    },
    verify: () => verifyAuditChain(db, master.subkey('audit')),
    async stop() {
      worker.shutdown();
      await running;
      await close();
      await pg.drop();
    },
  };
}

export { buildTurnRequest, submitTurn };
