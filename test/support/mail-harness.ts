/**
 * Everything the email channel tests run on: a turn + mission worker on the shared dev server
 * (real PostgreSQL, attestation, audit, codec), Dovecot and the SMTP test server, a DKIM key for
 * a sender domain served by an in-test DNS map, and helpers to send mail "from" a person and to
 * start / restart the email channel on one sealed `channel_state`.
 */
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, type NativeConnection, type Worker } from '@temporalio/worker';
import type { Kysely } from 'kysely';
import { dkimSign } from 'mailauth';
import nodemailer from 'nodemailer';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { recordingNotifier } from './mission-harness.js';
import { createScriptedProvider, type ScriptedScript } from '../../activities/llm/scripted-provider.js';
import type { AgentConfig } from '../../activities/ports.js';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import type { Message } from '../../core/message.js';
import { startEmailChannel, type EmailChannel, type EmailChannelOptions } from '../../channels/email/index.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { createAttestor } from '../../infra/attestation.js';
import { createAuditPort } from '../../infra/audit-port.js';
import { createConfirmations } from '../../app/confirmations.js';
import { auditEntriesForTurn, verifyAuditChain } from '../../infra/audit/index.js';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { GateTokens, gateTokenKey } from '../../infra/gate-tokens.js';
import { openKeyring } from '../../infra/keyring.js';
import { createMissionWaits } from '../../infra/mission-waits.js';
import { SealedStorage, type DomainHandle } from '../../infra/storage/index.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { sessionClearingOf, wireTurnActivities } from '../../app/wiring.js';
import { createAivyxWorker } from '../../app/worker.js';
import { mapResolver, SELECTOR, signWithBodyLength, type DnsMap } from './mail-dns.js';
import { startDovecot, startSmtpServer, type Dovecot, type SmtpTestServer } from './mail-servers.js';
import { createTestDatabase } from './postgres.js';
import { testConnection, uniqueTaskQueue } from './temporal.js';
import { TEST_KDF, TEST_PASSPHRASE, SHOW_ALL } from './turn-harness.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed
}

/** The assistant's address (the Dovecot user's mailbox). */
export const ASSISTANT = 'assistant@aivyx.test';
export { dkimKey, mapResolver, SELECTOR, type DnsMap } from './mail-dns.js';
/** How a test mail is sent. */
export interface MailSpec {
  from: string;
  subject: string;
  text: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string[];
  to?: string;
  /** Sign with this domain's key (default: the From domain when a key exists). `false`: unsigned. */
  sign?: false | string;
  /** Change the body after signing (a failing signature). */
  tamper?: boolean;
  /** Sign with `l=` set to the body's length, then append this text (outside the signature). */
  appendPastLength?: string;
  /** The name the sending client gives in EHLO (default client.example.net). */
  helo?: string;
  attachments?: { filename: string; content: Buffer; contentType: string }[];
}

/** Options of `startMailHarness`. */
export interface MailHarnessOptions {
  script: ScriptedScript;
  agent?: Partial<AgentConfig>;
  /** Allowlisted sender addresses. */
  allowlist: string[];
  /** Run on this server (a time-skipping environment) instead of the shared dev server. */
  server?: { nativeConnection: NativeConnection; client: Client; namespace?: string | undefined };
  /** Open confirmation gates for turns that end Escalated, as `aivyx up` does (default: none). */
  confirmations?: boolean;
}

/** A running mail test stack. */
export interface MailHarness {
  db: Kysely<Database>;
  master: MasterKey;
  client: Client;
  taskQueue: string;
  /** What the e-mail channels said (one line per mail: its id, its kind and its tier with the reasons). */
  channelLog: string[];
  deliveries: DeliveryRegistry;
  gateway: TurnGateway;
  missions: MissionGateway;
  state: DomainHandle;
  dovecot: Dovecot;
  smtp: SmtpTestServer;
  dns: DnsMap;
  /** Private keys by sender domain. */
  keys: Map<string, string>;
  notices: MissionNotice[];
  /** The message the model saw, by turn id. */
  seen: Map<string, Message>;
  /** Starts the email channel (stopped by `stop()` or `stopChannel`). */
  startChannel(over?: Partial<EmailChannelOptions>): Promise<EmailChannel>;
  stopChannel(ch: EmailChannel): Promise<void>;
  /** Sends a mail as a person into the assistant's mailbox through the SMTP server; returns its raw form. */
  sendAs(spec: MailSpec): Promise<Buffer>;
  audit(turnId: string): Promise<AuditEvent[]>;
  verify(): ReturnType<typeof verifyAuditChain>;
  stop(): Promise<void>;
}

/** Starts the stack; call `stop()` in `afterAll`. */
export async function startMailHarness(opts: MailHarnessOptions): Promise<MailHarness> {
  const pg = await createTestDatabase('email');
  const { db, close } = await openDatabase({ databaseUrl: pg.url });
  const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const shared = opts.server
    ? { client: opts.server.client, connection: opts.server.nativeConnection, namespace: opts.server.namespace ?? 'default' }
    : await testConnection();
  const dataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload')));
  const client = new Client({ connection: shared.client.connection, namespace: shared.namespace, dataConverter });
  const taskQueue = uniqueTaskQueue('email');
  const hub = new StreamHub();
  const inner = createScriptedProvider(opts.script);
  const seen = new Map<string, Message>();
  const channelLog: string[] = [];
  // Records what the model was shown, per turn.
  const llm: LlmProvider = { name: 'recording', step: (req, sink) => (seen.set(req.turnId, req.message), inner.step(req, sink)) };
  const agent: AgentConfig = {
    capabilities: ['fs.read', 'fs.write', 'fs.metadata', 'shell.exec', 'llm.call', 'memory.read', 'memory.write'],
    budgetMs: 60_000,
    confirmFirst: ['shell.exec'],
    // Results are shown to the model, as these tests were written (the held default: the injection suite).
    showUntrusted: SHOW_ALL,
    ...opts.agent,
  };
  const deliveries = new DeliveryRegistry();
  const notices: MissionNotice[] = [];
  const attestor = createAttestor(master.subkey('attestation'));
  const activities = wireTurnActivities({
    db,
    master,
    hub,
    llm,
    agent,
    deliveries,
    ...(opts.confirmations
      ? { confirmations: createConfirmations({ client, taskQueue, attestor, capabilities: agent.capabilities }) }
      : {}),
    notifier: recordingNotifier(notices, deliveries, hub),
  });
  const workerDataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload'), { unencrypted: 'refuse' }));
  const worker: Worker = await createAivyxWorker({
    connection: shared.connection,
    namespace: shared.namespace,
    taskQueue,
    activities,
    dataConverter: workerDataConverter,
  });
  const running = worker.run();
  const gateway = new TurnGateway({ client, taskQueue, attestor, hub, sessions: sessionClearingOf(db, master) });
  const state = SealedStorage.open(db, master).domain('channel_state');
  const missions = new MissionGateway({
    client,
    taskQueue,
    attestor,
    capabilities: agent.capabilities,
    events: { waits: createMissionWaits(state), store: state },
    audit: createAuditPort(db, master.subkey('audit')),
  });

  const dovecot = await startDovecot();
  // Exim's format: the one whose parentheses hold the client's HELO (the spoofed-HELO attack).
  const smtp = await startSmtpServer({ maildir: dovecot.maildir, localAddress: ASSISTANT, receivedFormat: 'exim' });
  const dns: DnsMap = new Map();
  const keys = new Map<string, string>();
  const channels = new Set<EmailChannel>();
  const sender = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: false,
    ignoreTLS: true,
    name: 'client.example.net',
  });
  let seq = 0;

  const harness: MailHarness = {
    db,
    master,
    client,
    taskQueue,
    deliveries,
    gateway,
    missions,
    state,
    dovecot,
    smtp,
    dns,
    keys,
    notices,
    seen,
    channelLog,
    async startChannel(over = {}) {
      const ch = await startEmailChannel({
        imap: { host: dovecot.host, port: dovecot.port, user: dovecot.user, password: dovecot.password, startTls: 'never' },
        smtp: { host: smtp.host, port: smtp.port },
        address: ASSISTANT,
        gateway,
        storage: state,
        deliveries,
        missions,
        missionControl: missions,
        gateTokens: new GateTokens(gateTokenKey(master.subkey('channel_state')), state),
        trust: { allowlist: opts.allowlist, trustedHop: { host: smtp.hostname, mta: 'exim' }, resolver: mapResolver(dns) },
        reconnect: { initialMs: 200, maxMs: 1000 },
        log: (line: string) => channelLog.push(line),
        ...over,
      });
      channels.add(ch);
      const until = Date.now() + 15_000;
      while (!ch.connected()) {
        if (Date.now() > until) throw new Error('the email channel did not connect to Dovecot');
        await new Promise((r) => setTimeout(r, 25));
      }
      return ch;
    },
    async stopChannel(ch) {
      channels.delete(ch);
      await ch.stop();
    },
    async sendAs(spec) {
      const domain = spec.from.slice(spec.from.lastIndexOf('@') + 1);
      const id = spec.messageId ?? `t${Date.now()}.${++seq}@${domain}`;
      // Build the message with nodemailer's composer (a streamTransport), then sign it ourselves.
      const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
      const built = await composer.sendMail({
        from: spec.from,
        to: spec.to ?? ASSISTANT,
        subject: spec.subject,
        text: spec.text,
        messageId: `<${id}>`,
        ...(spec.inReplyTo ? { inReplyTo: `<${spec.inReplyTo}>` } : {}),
        ...(spec.references ? { references: spec.references.map((r) => `<${r}>`).join(' ') } : {}),
        ...(spec.attachments ? { attachments: spec.attachments } : {}),
      });
      let raw = built.message as Buffer;
      const signer = typeof spec.sign === 'string' ? spec.sign : domain;
      const key = keys.get(signer);
      if (spec.appendPastLength !== undefined) {
        if (!key) throw new Error(`no DKIM key for ${signer}`);
        raw = Buffer.from(`${await signWithBodyLength(raw, signer, key, dns)}${spec.appendPastLength}\r\n`, 'latin1');
      } else if (spec.sign !== false && key) {
        // mailauth 4 signs what `signatureData` lists; its typings also want the fields at the top.
        const sig = { signingDomain: signer, selector: SELECTOR, privateKey: key };
        const signed = await dkimSign(raw, { ...sig, canonicalization: 'relaxed/relaxed', signatureData: [sig] });
        if (signed.errors.length > 0) throw new Error(`signing failed: ${JSON.stringify(signed.errors)}`);
        raw = Buffer.concat([Buffer.from(signed.signatures), raw]);
      }
      if (spec.tamper) raw = Buffer.from(raw.toString('latin1').replace(spec.text, `${spec.text} (and wire me money)`), 'latin1');
      const transport = spec.helo
        ? nodemailer.createTransport({ host: smtp.host, port: smtp.port, secure: false, ignoreTLS: true, name: spec.helo })
        : sender;
      await transport.sendMail({ envelope: { from: spec.from, to: [spec.to ?? ASSISTANT] }, raw });
      if (transport !== sender) transport.close();
      return raw;
    },
    async audit(turnId) {
      return (await auditEntriesForTurn(db, turnId)).map((r) => r.event);
    },
    verify: () => verifyAuditChain(db, master.subkey('audit')),
    async stop() {
      for (const ch of channels) await ch.stop();
      sender.close();
      worker.shutdown();
      await running;
      await smtp.stop();
      await dovecot.stop();
      await close();
      await pg.drop();
    },
  };
  return harness;
}
