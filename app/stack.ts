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
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { sql } from 'kysely';
import { detectOllama, providerFromSpec } from '../activities/llm/provider-from-config.js';
import { createMcpClientPool } from '../activities/mcp/mcp-client.js';
import type { LlmProvider } from '../activities/llm/llm-provider.js';
import type { Specialist } from '../core/specialists.js';
import { DeliveryRegistry, routingMissionNotifier } from '../activities/delivery-activities.js';
import { streamMissionNotifier } from '../activities/mission-activities.js';
import { createConfirmations, createMissionStarts } from './confirmations.js';
import { createAuditPort } from '../infra/audit-port.js';
import { createScheduleRecords } from './schedules.js';
import type { ChannelContext } from '../channels/contract.js';
import { MissionGateway } from '../channels/mission-gateway.js';
import { createMissionWaits } from '../infra/mission-waits.js';
import { startRestServer } from '../channels/rest/rest-server.js';
import { createOwnerSpecialists } from './owner-specialists.js';
import { startAppServer } from '../channels/app/index.js';
import { CHANNELS } from '../channels/registry.js';
import { AivyxError } from '../core/errors.js';
import { TurnGateway } from '../channels/turn-gateway.js';
import { createAttestor } from '../infra/attestation.js';
import { GateTokens, gateTokenKey } from '../infra/gate-tokens.js';
import { createInbox } from '../infra/inbox.js';
import { aivyxDataConverter, createPayloadCodec, startCodecServer, type CodecServer } from '../infra/codec/index.js';
import { createAuditService, startAuditCheckpoints, startAuditDigest, witnessPath } from '../infra/audit/index.js';
import type { AivyxConfig } from '../infra/config.js';
import { dataDirProtection } from '../infra/data-dir.js';
import { openDatabase } from '../infra/db/index.js';
import { describeCause, Health, watchDependency } from '../infra/health.js';
import { lockHome, type HomeRole } from '../infra/home-lock.js';
import { codecToken, restToken } from '../infra/home-tokens.js';
import { getSecret } from '../infra/secrets.js';
import { SealedStorage, unlockStorageKeyring } from '../infra/storage/index.js';
import { createAttachmentStore, startAttachmentSweep } from '../infra/attachments.js';
import { StreamHub } from '../infra/stream-hub.js';
import { startPgStreamBus, type StreamBus } from '../infra/stream-bus.js';
import { holdLease, type LeasedWork } from '../infra/leases.js';
import { workspaceDir } from '../infra/tier-policy.js';
import { assertPortsFree, portTakenError, type WantedPort } from '../infra/port-check.js';
import {
  claimNamespace,
  clusterConnectionOptions,
  ensureNamespaceSetup,
  findTemporalCli,
  freePort,
  LEGACY_TASK_QUEUE,
  legacyQueueWork,
  stopLeftoverDevServer,
  superviseDevServer,
  type SupervisedDevServer,
} from '../infra/temporal/index.js';
export { codecToken, restToken } from '../infra/home-tokens.js';
import { reconciledAuditService, reconcileToolCalls } from '../infra/tool-call-log.js';
import { startTracing, tracingSettingsFromEnv } from '../infra/telemetry/index.js';
import { ownerMemoryOf, ownerSkillsOf, resumeRecordsOf, sessionClearingOf, wireTurnActivities } from './wiring.js';
import { createSkillEditGates } from './owner-skill-edits.js';
import { createAivyxWorker, superviseWorker } from './worker.js';

/** Each probe of a dependency gets this long to answer. */
const PROBE_TIMEOUT_MS = 2_000;

/** A running stack. */
export interface Stack {
  /** The REST channel (none in the `worker` role). */
  restUrl: string | undefined;
  restToken: string;
  /** The owner's app (none in the `worker` role or for a headless stack). */
  appUrl: string | undefined;
  temporalAddress: string;
  /** The install's public identity (MasterKey.installId): it names the default task queue and marks the namespace. */
  installId: string;
  /** The task queue this install's workflows run on (AIVYX_TASK_QUEUE, else `aivyx-<first 8 of installId>`). */
  taskQueue: string;
  uiUrl: string | undefined;
  /** The codec server the Temporal UI decodes payloads through (not started for a headless stack). */
  codecUrl: string | undefined;
  client: Client;
  /** Temporal, the database and the channels, as /v1/health reports them. */
  health: Health;
  /** Settles only if the stack cannot go on (its dev server could not be brought back): stop it and exit. */
  failed: Promise<AivyxError>;
  /** Stops everything started here, in reverse order. */
  stop(): Promise<void>;
}

/** Options beyond the configuration. */
export interface StackOptions {
  config: AivyxConfig;
  passphrase: string;
  /** First run at a prompt: the passphrase typed again before the install is created (infra/keyring.ts). */
  confirmPassphrase?: () => Promise<string>;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  /**
   * `up`, or a command running on its own stack (`--standalone`): named in the data directory's lock.
   * `worker` and `gateway` are the scale-out roles (many per install; no lock on the data directory).
   */
  role?: StackRole;
  /** `worker` role: do not poll the host queue (this machine does not own the files). */
  noHostTools?: boolean;
  /** Bind the REST channel to the configured port (`up`) or any free port (`chat` standalone). */
  restPort?: number;
  /** Start the dev server without the UI (standalone chat). */
  headless?: boolean;
  /** Progress lines for the person starting it (also: a dependency going down and coming back). */
  log?: (line: string) => void;
  llm?: LlmProvider;
}

/** What one process runs. */
export type StackRole = Extract<HomeRole, 'up' | 'standalone'> | 'worker' | 'gateway';

const runsWorker = (role: StackRole) => role !== 'gateway';
const runsChannels = (role: StackRole) => role !== 'worker';

/** The scale-out roles share a real cluster and PostgreSQL (PGlite and the dev server belong to one process). */
function checkRole(config: AivyxConfig, role: StackRole, noHostTools: boolean): void {
  if (role !== 'worker' && role !== 'gateway') return;
  const missing = [config.temporalAddress ? undefined : 'TEMPORAL_ADDRESS', config.databaseUrl ? undefined : 'DATABASE_URL'].filter(
    Boolean,
  );
  if (missing.length > 0)
    throw new AivyxError('Config', `aivyx ${role} needs ${missing.join(' and ')}: its processes share a Temporal cluster and PostgreSQL`, {
      hint: 'set them (docs/DEPLOY.md), or run everything in one process with aivyx up',
    });
  if (noHostTools && !config.hostQueue)
    throw new AivyxError('Config', '--no-host-tools needs AIVYX_HOST_QUEUE: without a host queue every worker runs the host tools', {
      hint: 'set AIVYX_HOST_QUEUE to the same value in every process of the install (docs/DEPLOY.md)',
    });
}

/** The install's default task queue: its identity in the name, so no other install's worker ever polls it. */
export function installTaskQueue(installId: string): string {
  return `aivyx-${installId.slice(0, 8)}`;
}

/** Every port this process will listen on, with the setting that moves it (0: any free port, not checked). */
function portsToBind(config: AivyxConfig, role: StackRole, opts: Pick<StackOptions, 'headless' | 'restPort'>): WantedPort[] {
  const devServer = !config.temporalAddress;
  const codec = !opts.headless && (devServer || role === 'gateway');
  return [
    ...(devServer ? [{ port: config.temporalPort, setting: 'AIVYX_TEMPORAL_PORT', what: 'the Temporal dev server' }] : []),
    ...(devServer && !opts.headless ? [{ port: config.uiPort, setting: 'AIVYX_UI_PORT', what: 'the Temporal UI' }] : []),
    ...(codec ? [{ port: config.codecPort, setting: 'AIVYX_CODEC_PORT', what: "the UI's codec server" }] : []),
    ...(runsChannels(role) ? [restPortOf(config, opts)] : []),
    ...(runsChannels(role) && !opts.headless ? [{ port: config.appPort, setting: 'AIVYX_APP_PORT', what: "the owner's app" }] : []),
  ];
}

/** The REST channel's port: the configured one (`up`, gateway) or the caller's (0 for a standalone command). */
function restPortOf(config: AivyxConfig, opts: Pick<StackOptions, 'restPort'>): WantedPort {
  return { port: opts.restPort ?? config.restPort, setting: 'AIVYX_REST_PORT', what: 'the REST channel' };
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

/** PostgreSQL's place without its password (for messages and /v1/health). */
function postgresLabel(url: string): string {
  const u = new URL(url);
  return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

// Network failures that mean "the database is not there", as opposed to a bad schema or passphrase.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', '57P03']);

function unreachableCode(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined, depth = 0;
    e && depth < 8;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && UNREACHABLE_CODES.has(e.code)) return e.code;
    const inner = e.errors?.find((x) => UNREACHABLE_CODES.has(String((x as { code?: unknown }).code)));
    if (inner) return String((inner as { code?: unknown }).code);
  }
  return undefined;
}

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
  const cleanups: Array<() => Promise<void> | void> = [() => lock?.release()];
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
    // A dev server left by a previous owner that died must be gone before ours binds its port and file.
    if (!config.temporalAddress && lock?.previous?.devServerPid) await stopLeftoverDevServer(lock.previous.devServerPid, config.home);
    // Every port is checked before anything opens or starts: a taken one is named with its setting.
    await assertPortsFree(portsToBind(config, role, opts), { then: 'nothing was started' });
    // Traces (docs/OBSERVABILITY.md), when an OTLP endpoint is set; stopped last, so it flushes the worker's spans.
    const tracingSettings = tracingSettingsFromEnv(opts.env);
    const tracing = tracingSettings && startTracing(tracingSettings, { role: opts.role ?? 'up' });
    if (tracing) cleanups.push(() => tracing.shutdown());
    const health = new Health(log);
    const dbLabel = config.databaseUrl ? postgresLabel(config.databaseUrl) : `PGlite in ${join(config.home, 'pglite')}`;
    health.register('database', {
      label: `the database (${dbLabel})`,
      kind: 'Storage',
      hint: config.databaseUrl
        ? 'start PostgreSQL or fix DATABASE_URL; aivyx reconnects by itself once it answers'
        : 'PGlite runs inside aivyx: restart aivyx up',
    });
    const db = await openDatabase(
      config.databaseUrl ? { databaseUrl: config.databaseUrl } : { pgliteDir: join(config.home, 'pglite') },
    ).catch((err: unknown) => {
      const code = unreachableCode(err);
      if (!code) throw err;
      throw new AivyxError('Storage', `cannot reach the database (${dbLabel}, from DATABASE_URL): ${describeCause(err) || code}`, {
        hint: 'start PostgreSQL or fix DATABASE_URL (unset it to use the embedded PGlite)',
        detail: { dependency: 'database', unavailable: true },
        cause: err,
      });
    });
    cleanups.push(() => db.close());
    log(`database: ${db.kind === 'postgres' ? `${dbLabel} (DATABASE_URL)` : dbLabel}`);
    const keys = await unlockStorageKeyring(db.db, opts.passphrase, opts.confirmPassphrase ? { confirmNew: opts.confirmPassphrase } : {});
    const master = keys.master;
    const installId = master.installId();
    const taskQueue = config.taskQueue ?? installTaskQueue(installId);
    log(`install ${installId}: task queue ${taskQueue}${config.hostQueue ? `, host queue ${config.hostQueue}` : ''}`);
    const storage = SealedStorage.open(db.db, keys);
    // Signed checkpoints of the audit log go to the witness file outside the database (docs/AUDIT.md);
    // `audit verify` also reconciles tool calls and intents with the log.
    const auditKey = master.subkey('audit');
    const audit = reconciledAuditService(
      createAuditService({ db: db.db, auditKey, checkpointSeed: master.subkey('audit_checkpoint'), witnessPath: witnessPath(config.home) }),
      db.db,
      auditKey,
    );
    // Every client and worker of ours encrypts payloads: histories on the server hold no plaintext. The
    // worker refuses what is not encrypted for the workflow it arrives at; clients throw on it; the
    // codec server only displays.
    const codec = createPayloadCodec(master.subkey('payload'), { unencrypted: 'pass' });
    const dataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload')));
    const workerDataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload'), { unencrypted: 'refuse' }));
    // The model is settled before Temporal starts: a bad script or a missing key is reported at once.
    const llm = runsWorker(role)
      ? (opts.llm ?? (await providerFromSpec(await chooseLlm(config, log), opts.env, (name) => getSecret(storage, name))))
      : undefined;
    // A specialist that names its own model gets that provider, settled here too (a missing key stops the start).
    const specialistLlms = runsWorker(role) && !opts.llm ? await specialistProviders(config.specialists, opts.env, storage) : undefined;

    let address: string;
    let uiUrl: string | undefined;
    let codecServer: CodecServer | undefined;
    let devServer: SupervisedDevServer | undefined;
    const rest: { url?: string; appUrl?: string } = {};
    // What other commands find in running.json; republished when the dev server gets a new pid.
    const publish = () => {
      if (rest.url)
        lock?.publish({
          restUrl: rest.url,
          ...(rest.appUrl ? { appUrl: rest.appUrl } : {}),
          temporalAddress: address,
          ...(devServer ? { devServerPid: devServer.current().pid } : {}),
          ...(uiUrl ? { uiUrl } : {}),
        });
    };
    // The codec server the Temporal UI decodes through; it answers CORS for the UI's origin only. With
    // our own dev server it also serves that UI under its origin, where decoding needs one sign-in.
    // AIVYX_UI_PORT=0 (any free port) is settled here: the codec server must know the UI's origin.
    const uiPort = config.uiPort || (await freePort());
    const startUiCodecServer = async (serveUi: boolean) => {
      const ui = `http://127.0.0.1:${uiPort}`;
      const server = await startCodecServer({
        codec,
        token: codecToken(config.home),
        allowedOrigin: ui,
        ...(serveUi ? { uiUpstream: ui } : { uiUrl: ui }),
        port: config.codecPort,
      });
      cleanups.push(() => server.stop());
      return server;
    };
    if (config.temporalAddress) {
      address = config.temporalAddress;
      // On a cluster the gateway serves the operators' UI its codec endpoint.
      if (role === 'gateway' && !opts.headless) codecServer = await startUiCodecServer(false);
      health.register('temporal', {
        label: `Temporal at ${address}`,
        kind: 'Channel',
        hint: 'check that cluster (TEMPORAL_ADDRESS); aivyx reconnects by itself once it answers',
      });
    } else {
      const cliPath = findTemporalCli({ env: opts.env, projectRoot: opts.projectRoot });
      // Started first so the UI can be pointed at it.
      if (!opts.headless) codecServer = await startUiCodecServer(true);
      log('starting the Temporal dev server…');
      const devServerHint = `aivyx up restarts it by itself: retry in a few seconds (its log: ${join(config.home, 'temporal-server.log')})`;
      health.register('temporal', { label: 'the Temporal dev server', kind: 'Channel', hint: devServerHint });
      devServer = await superviseDevServer(
        {
          cliPath,
          home: config.home,
          port: config.temporalPort,
          ...(opts.headless ? { headless: true } : { uiPort }),
          ...(codecServer ? { uiCodecEndpoint: codecServer.url } : {}),
        },
        {
          died: (server, exit) =>
            health.down(
              'temporal',
              `its process ${server.pid} exited (${exit.signal ?? `code ${exit.code}`}); restarting it on the same data and ports`,
            ),
          restartFailed: (err, retryInMs) =>
            log(`restarting the Temporal dev server failed (${describeCause(err)}); trying again in ${Math.round(retryInMs / 1000)} s`),
          restarted: (server, restarts) => {
            log(`Temporal dev server restarted (pid ${server.pid}, restart ${restarts})`);
            health.up('temporal');
            publish();
          },
          gaveUp: (attempts, lastError) => {
            const why = `gave up restarting it after ${attempts} attempts${lastError ? ` (last: ${describeCause(lastError)})` : ' (it died again at once)'}`;
            health.down('temporal', why);
            fail(
              new AivyxError('Channel', `the Temporal dev server cannot be brought back: ${why}`, {
                hint: `its log: ${join(config.home, 'temporal-server.log')}; fix the cause and start aivyx up again`,
              }),
            );
          },
        },
      );
      const supervised = devServer;
      cleanups.push(() => supervised.stop());
      address = devServer.address;
      // The UI as the operator should open it: through the codec server, which decodes for it.
      uiUrl = codecServer?.url ?? devServer.uiUrl;
      health.register('temporal', { label: `the Temporal dev server at ${address}`, kind: 'Channel', hint: devServerHint });
    }
    // A cluster's TLS and API key (TEMPORAL_TLS_*, TEMPORAL_API_KEY); our own dev server needs none.
    const connectOptions = config.temporalAddress ? clusterConnectionOptions(address, opts.env) : { address };
    const connection = await Connection.connect(connectOptions).catch((err: unknown) => {
      throw new AivyxError(
        'Channel',
        `cannot reach Temporal at ${address}${config.temporalAddress ? ' (TEMPORAL_ADDRESS)' : ''}: ${describeCause(err)}`,
        {
          hint: config.temporalAddress
            ? 'check that the cluster is up and the address is right, or unset TEMPORAL_ADDRESS to run a local dev server'
            : `see ${join(config.home, 'temporal-server.log')}`,
          detail: { dependency: 'temporal', unavailable: true },
          cause: err,
        },
      );
    });
    cleanups.push(() => connection.close());
    // One install per namespace: refused (before anything here touches it) when another install holds it.
    await claimNamespace(
      connection,
      { address, namespace: config.namespace, ...(config.temporalAddress ? {} : { devServerData: join(config.home, 'temporal.sqlite') }) },
      installId,
    );
    if (config.temporalAddress) await ensureNamespaceSetup(connection, config.namespace);
    const client = new Client({
      connection,
      namespace: config.namespace,
      dataConverter,
      ...(tracing && { interceptors: tracing.clientInterceptors }),
    });
    const nativeConnection = await NativeConnection.connect(connectOptions);
    cleanups.push(() => nativeConnection.close());
    // Probes: Temporal's gRPC health check, and PostgreSQL (PGlite lives in this process).
    cleanups.push(
      watchDependency(
        health,
        'temporal',
        () => connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => connection.healthService.check({})),
        { timeoutMs: PROBE_TIMEOUT_MS },
      ),
    );
    if (db.kind === 'postgres')
      cleanups.push(
        watchDependency(health, 'database', () => sql`select 1`.execute(db.db), { intervalMs: 2_000, timeoutMs: PROBE_TIMEOUT_MS }),
      );

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
        ? { pool: createMcpClientPool(config.mcpServers), tierGrants: config.mcpTiers }
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
    // Expired attachments' sealed rows are deleted (they are not served from the moment they expire).
    if (runsWorker(role)) {
      const store = createAttachmentStore(channelState, { ttlMs: config.env.AIVYX_ATTACHMENT_TTL });
      await once('attachment-sweep', async () => startAttachmentSweep({ store, log }));
    }

    if (runsWorker(role)) {
      // Gate notices go to the stream hub (by mission id) and the approvers' channels.
      const notifier = routingMissionNotifier(
        deliveries,
        streamMissionNotifier((key, e) => hub.publish(key, e)),
      );
      const activities = wireTurnActivities({
        db: db.db,
        master,
        hub,
        deliveries,
        confirmations: createConfirmations(starter),
        // Missions the assistant drafted and a person approved (mission.create).
        missionStarts: createMissionStarts(starter),
        missionControl: missions,
        schedules: createScheduleRecords(client),
        notifier,
        ...(mcp ? { mcp } : {}),
        llm: llm!,
        ...(specialistLlms ? { specialistLlms } : {}),
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
      // The shared queue, and the host's own queue where this machine owns the files (activities only).
      const queues = [
        { taskQueue, workflows: true },
        ...(config.hostQueue && !opts.noHostTools ? [{ taskQueue: config.hostQueue, workflows: false }] : []),
        ...((await drainsLegacyQueue(config, client, log)) ? [{ taskQueue: LEGACY_TASK_QUEUE, workflows: true }] : []),
      ];
      for (const queue of queues) {
        // A worker that gives up (rather than riding out an outage, which the SDK does) is replaced.
        const worker = await superviseWorker(
          () =>
            createAivyxWorker({
              connection: nativeConnection,
              namespace: config.namespace,
              ...queue,
              workflowCache: config.workflowCache,
              activities,
              dataConverter: workerDataConverter,
              ...(tracing && { tracing: tracing.worker }),
            }),
          log,
        );
        cleanups.push(() => worker.stop());
      }
      if (config.hostQueue) log(`host tools: ${opts.noHostTools ? 'not here' : 'here'} (task queue ${config.hostQueue})`);
      // A worker sends what its activities deliver (replies, gate notices, channel.send) while a gateway receives.
      if (role === 'worker')
        for (const channel of CHANNELS) {
          const settings = await channel.configure({ env: opts.env, secret: (name) => getSecret(storage, name) });
          if (settings === undefined) continue;
          if (!channel.outbound) {
            log(
              `${channel.label} cannot send from a worker (its replies need the process that received the message): run it under aivyx up`,
            );
            continue;
          }
          const running = await channel.outbound(settings, { deliveries, storage: channelState, gateTokens, log });
          cleanups.push(() => running.stop());
          log(running.describe);
        }
      // Tool calls whose entry is still owed after a crash (their turn ended, the entry never came) are written now.
      const reconciled = await reconcileToolCalls(db.db, master.subkey('audit'), { write: true });
      if (reconciled.written > 0)
        log(`audit: wrote ${reconciled.written} owed tool-call entr${reconciled.written === 1 ? 'y' : 'ies'} left by an earlier crash`);
    }
    const common = { temporalAddress: address, installId, taskQueue, uiUrl, client, health, failed, stop };
    if (!runsChannels(role)) return { ...common, restUrl: undefined, restToken: '', appUrl: undefined, codecUrl: undefined };

    // Every chat channel the registry knows that is configured (Telegram: a bot token secret; email: AIVYX_EMAIL_ADDRESS),
    // each under its lease: with several gateways exactly one polls, and another takes over when it dies.
    for (const channel of CHANNELS) {
      const settings = await channel.configure({ env: opts.env, secret: (name) => getSecret(storage, name) });
      if (settings === undefined) continue;
      health.register(`channel:${channel.name}`, { label: channel.label, kind: 'Channel', hint: 'see the log above' });
      const lease = await leaseChannel(shared, channel.name, log, async () => {
        const running = await channel.start(settings, channels);
        log(running.describe);
        return running;
      });
      cleanups.push(() => lease.stop());
    }
    const token = restToken(config.home);
    const restPort = restPortOf(config, opts);
    const restServer = await startRestServer({
      gateway,
      token,
      port: restPort.port,
      audit,
      missions,
      memory: ownerMemoryOf(db.db, master, { capabilities: config.capabilities, tierPolicy: config.tierPolicy }),
      skills: ownerSkills,
      specialists: createOwnerSpecialists({
        client,
        taskQueue,
        audit: createAuditPort(db.db, master.subkey('audit')),
        capabilities: config.capabilities,
        tierPolicy: config.tierPolicy,
      }),
      inbox: createInbox(storage.domain('sessions')),
      attachments: createAttachmentStore(channelState, { ttlMs: config.env.AIVYX_ATTACHMENT_TTL }),
      health,
      info: { temporalUi: uiUrl ?? null, temporalAddress: address },
    }).catch((err: unknown) => {
      // Taken since the check at start (another program was quicker): the same refusal, naming the setting.
      throw portTakenError(err, restPort) ?? err;
    });
    cleanups.push(() => restServer.stop());
    health.register('channel:rest', { label: `the REST channel at ${restServer.url}`, kind: 'Channel', hint: 'restart aivyx up' });
    rest.url = restServer.url;
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
      rest.appUrl = appServer.url;
    }
    publish();
    return { ...common, restUrl: restServer.url, restToken: token, appUrl: rest.appUrl, codecUrl: codecServer?.url };
  } catch (err) {
    await stop();
    throw err;
  }
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

/** The configured model; unset → Ollama when it answers on localhost, else the offline demo script. */
/** The providers of the specialists that name a model of their own, by name; undefined when none does. */
async function specialistProviders(
  specialists: readonly Specialist[],
  env: NodeJS.ProcessEnv,
  storage: Parameters<typeof getSecret>[0],
): Promise<Map<string, LlmProvider> | undefined> {
  const named = specialists.filter((s) => s.model !== undefined);
  if (named.length === 0) return undefined;
  const providers = await Promise.all(named.map((s) => providerFromSpec(s.model!, env, (name) => getSecret(storage, name))));
  return new Map(named.map((s, i) => [s.name, providers[i]!]));
}

async function chooseLlm(config: AivyxConfig, log: (line: string) => void): Promise<string> {
  if (config.llm) return config.llm;
  if (await detectOllama()) {
    log(`model: Ollama on localhost (${config.ollamaModel}; set AIVYX_OLLAMA_MODEL or AIVYX_LLM to change)`);
    return `ollama:${config.ollamaModel}`;
  }
  log(
    'model: none configured — using the offline demo script. Set AIVYX_LLM=openai:<model>, anthropic:<model> or ollama:<model> (docs/LLM-PROVIDERS.md)',
  );
  return `scripted:${config.demoScript}`;
}
