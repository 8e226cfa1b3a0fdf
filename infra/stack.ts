/**
 * The whole assistant on one machine: database, keys, Temporal (a dev server unless
 * TEMPORAL_ADDRESS is set), the worker and the local REST channel. `aivyx up` runs it until
 * stopped; `aivyx chat` runs it for one conversation when no `aivyx up` is around.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { detectOllama, providerFromSpec } from '../activities/llm/provider-from-config.js';
import { createMcpClientPool } from '../activities/mcp/mcp-client.js';
import type { LlmProvider } from '../activities/llm/llm-provider.js';
import { DeliveryRegistry, routingMissionNotifier } from '../activities/delivery-activities.js';
import { createMissionActivities, streamMissionNotifier } from '../activities/mission-activities.js';
import { createConfirmations } from './confirmations.js';
import { MissionGateway } from '../channels/mission-gateway.js';
import { startRestServer } from '../channels/rest/rest-server.js';
import { emailConfigFromEnv, emailOptionsFromConfig, startEmailChannel } from '../channels/email/index.js';
import { startTelegramChannel, telegramConfigFromEnv } from '../channels/telegram/index.js';
import { TurnGateway } from '../channels/turn-gateway.js';
import { createAttestor } from './attestation.js';
import { createAuditPort } from './audit-port.js';
import { GateTokens, gateTokenKey } from './gate-tokens.js';
import { aivyxDataConverter, createPayloadCodec, startCodecServer, type CodecServer } from './codec/index.js';
import { createAuditService, startAuditCheckpoints, startAuditDigest, witnessPath } from './audit/index.js';
import type { AivyxConfig } from './config.js';
import { openDatabase } from './db/index.js';
import { lockHome } from './home-lock.js';
import { getSecret } from './secrets.js';
import { SealedStorage, unlockStorageKeyring } from './storage/index.js';
import { StreamHub } from './stream-hub.js';
import { ensureNamespaceSetup, findTemporalCli, startDevServer } from './temporal/index.js';
import { wireTurnActivities } from './wiring.js';
import { createAivyxWorker } from './worker.js';

/** A running stack. */
export interface Stack {
  restUrl: string;
  restToken: string;
  temporalAddress: string;
  uiUrl: string | undefined;
  /** The codec server the Temporal UI decodes payloads through (not started for a headless stack). */
  codecUrl: string | undefined;
  client: Client;
  worker: Worker;
  /** Stops everything started here, in reverse order. */
  stop(): Promise<void>;
}

/** Options beyond the configuration. */
export interface StackOptions {
  config: AivyxConfig;
  passphrase: string;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  /** Bind the REST channel to the configured port (`up`) or any free port (`chat` standalone). */
  restPort?: number;
  /** Start the dev server without the UI (standalone chat). */
  headless?: boolean;
  /** Progress lines for the person starting it. */
  log?: (line: string) => void;
  llm?: LlmProvider;
}

/** The REST channel's bearer token, created on first start and readable only by this user. */
export function restToken(home: string): string {
  const file = join(home, 'rest-token');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** The codec server's bearer token, created once (never overwritten), readable only by this user. */
export function codecToken(home: string): string {
  const file = join(home, 'codec-token');
  try {
    closeSync(openSync(file, 'wx', 0o600));
    writeFileSync(file, randomBytes(32).toString('hex'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return readFileSync(file, 'utf8').trim();
}

/** Starts the stack; on failure everything already started is stopped again. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const { config } = opts;
  const log = opts.log ?? (() => undefined);
  mkdirSync(config.home, { recursive: true, mode: 0o700 });
  const lock = lockHome(config.home);
  const cleanups: Array<() => Promise<void> | void> = [() => lock.release()];
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
    const db = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl } : { pgliteDir: join(config.home, 'pglite') });
    cleanups.push(() => db.close());
    log(`database: ${db.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${join(config.home, 'pglite')}`}`);
    const keys = await unlockStorageKeyring(db.db, opts.passphrase);
    const master = keys.master;
    const storage = SealedStorage.open(db.db, keys);
    // Signed checkpoints of the audit log go to the witness file outside the database (docs/AUDIT.md).
    const audit = createAuditService({ db: db.db, auditKey: master.subkey('audit'), checkpointSeed: master.subkey('audit_checkpoint'), witnessPath: witnessPath(config.home) });
    const checkpoints = startAuditCheckpoints({ db: db.db, service: audit, every: config.auditCheckpointEvery, seconds: config.auditCheckpointSeconds, log });
    cleanups.push(() => checkpoints.stop());
    // Every client and worker of ours encrypts payloads: histories on the server hold no plaintext.
    const codec = createPayloadCodec(master.subkey('payload'));
    const dataConverter = aivyxDataConverter(codec);

    let address: string;
    let uiUrl: string | undefined;
    let codecServer: CodecServer | undefined;
    if (config.temporalAddress) address = config.temporalAddress;
    else {
      const cliPath = findTemporalCli({ env: opts.env, projectRoot: opts.projectRoot });
      if (!opts.headless) {
        // Started first so the UI can be pointed at it; it answers CORS for the UI's origins only.
        const ui = `http://127.0.0.1:${config.uiPort}`;
        codecServer = await startCodecServer({ codec, token: codecToken(config.home), allowedOrigin: [ui, `http://localhost:${config.uiPort}`], uiUrl: ui });
        cleanups.push(() => codecServer?.stop());
      }
      log('starting the Temporal dev server…');
      const server = await startDevServer({
        cliPath,
        home: config.home,
        port: config.temporalPort,
        ...(opts.headless ? { headless: true } : { uiPort: config.uiPort }),
        ...(codecServer ? { uiCodecEndpoint: codecServer.url } : {}),
      });
      cleanups.push(() => server.stop());
      address = server.address;
      uiUrl = server.uiUrl;
    }
    const connection = await Connection.connect({ address });
    cleanups.push(() => connection.close());
    if (config.temporalAddress) await ensureNamespaceSetup(connection, config.namespace);
    const client = new Client({ connection, namespace: config.namespace, dataConverter });
    const nativeConnection = await NativeConnection.connect({ address });
    cleanups.push(() => nativeConnection.close());

    const hub = new StreamHub();
    const llm = opts.llm ?? (await providerFromSpec(await chooseLlm(config, log), opts.env, (name) => getSecret(storage, name)));
    const mcp = config.mcpServers.length > 0 ? { pool: createMcpClientPool(config.mcpServers), tierGrants: config.mcpTiers } : undefined;
    if (mcp) cleanups.push(() => mcp.pool.close());
    const attestor = createAttestor(master.subkey('attestation'));
    // Channels that deliver replies and gate notices themselves (Telegram, email) register here once started.
    const deliveries = new DeliveryRegistry();
    if (config.auditDigest) {
      const digest = startAuditDigest({ service: audit, deliveries, target: config.auditDigest, log });
      cleanups.push(() => digest.stop());
    }
    // Confirm-first in conversations: an escalated channel turn opens a confirmation mission's gate.
    const confirmations = createConfirmations({ client, taskQueue: config.taskQueue, capabilities: config.capabilities, dashboard: true });
    const notifier = routingMissionNotifier(deliveries, streamMissionNotifier((key, e) => hub.publish(key, e)));
    const activities = {
      ...wireTurnActivities({ db: db.db, master, hub, deliveries, confirmations, ...(mcp ? { mcp } : {}), llm, agent: { capabilities: config.capabilities, budgetMs: config.turnBudgetMs, confirmFirst: config.confirmFirst } }),
      // Missions: their step turns are attested here; gate notices go to the stream hub (by mission id) and the approvers' channels.
      ...createMissionActivities({ audit: createAuditPort(db.db, master.subkey('audit')), attestor, notifier }),
    };
    const worker = await createAivyxWorker({ connection: nativeConnection, namespace: config.namespace, taskQueue: config.taskQueue, activities, dataConverter });
    const running = worker.run();
    cleanups.push(async () => {
      worker.shutdown();
      await running;
    });

    const gateway = new TurnGateway({ client, taskQueue: config.taskQueue, attestor, hub });
    // Missions for REST, Telegram and email approvals; our dev server and ensureNamespaceSetup register the dashboard search attributes.
    const missions = new MissionGateway({ client, taskQueue: config.taskQueue, capabilities: config.capabilities, dashboard: true });
    // Chat channels keep their state sealed in channel_state; approval buttons and reply tokens are MACed and single use.
    const channelState = storage.domain('channel_state');
    const gateTokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), channelState);
    const channels = { gateway, deliveries, missions, gateTokens, storage: channelState, log };
    // Telegram (SemiTrusted for allowlisted DMs) when a bot token secret is configured.
    const telegram = await telegramConfigFromEnv(opts.env, (name) => getSecret(storage, name));
    if (telegram) {
      const tg = await startTelegramChannel({ ...telegram, ...channels });
      cleanups.push(() => tg.stop());
      log(`telegram: ${telegram.mode === 'polling' ? 'long polling' : `webhook on ${tg.webhookUrl ?? '?'}`}`);
    }
    // Email (SemiTrusted for DKIM/SPF-verified, allowlisted senders) when AIVYX_EMAIL_ADDRESS is set (docs/EMAIL.md).
    const email = await emailConfigFromEnv(opts.env, (name) => getSecret(storage, name));
    if (email) {
      const mail = await startEmailChannel({ ...emailOptionsFromConfig(email), ...channels });
      cleanups.push(() => mail.stop());
      log(`email: ${email.address} (IMAP ${email.imap.host}:${email.imap.port}, SMTP ${email.smtp.host}:${email.smtp.port})`);
    }
    const token = restToken(config.home);
    const rest = await startRestServer({
      gateway,
      token,
      port: opts.restPort ?? config.restPort,
      audit,
      missions,
      info: { temporalUi: uiUrl ?? null, temporalAddress: address },
    });
    cleanups.push(() => rest.stop());
    lock.publish({ restUrl: rest.url, temporalAddress: address, ...(uiUrl ? { uiUrl } : {}) });
    return { restUrl: rest.url, restToken: token, temporalAddress: address, uiUrl, codecUrl: codecServer?.url, client, worker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The configured model; unset → Ollama when it answers on localhost, else the offline demo script. */
async function chooseLlm(config: AivyxConfig, log: (line: string) => void): Promise<string> {
  if (config.llm) return config.llm;
  if (await detectOllama()) {
    log(`model: Ollama on localhost (${config.ollamaModel}; set AIVYX_OLLAMA_MODEL or AIVYX_LLM to change)`);
    return `ollama:${config.ollamaModel}`;
  }
  log('model: none configured — using the offline demo script. Set AIVYX_LLM=openai:<model>, anthropic:<model> or ollama:<model> (docs/LLM-PROVIDERS.md)');
  return `scripted:${config.demoScript}`;
}
