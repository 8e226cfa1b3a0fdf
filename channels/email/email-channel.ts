/**
 * The email channel: imapflow IDLE on one mailbox for inbound mail (mailbox.ts, inbound.ts), nodemailer
 * over SMTP for replies and approval requests (outbound.ts). Each mail's tier comes from our own
 * DKIM/SPF/DMARC check (`trust.ts`); a thread is a session; the turn id is a hash of the Message-ID, so a
 * mail fetched twice runs one turn. Replies are sent by the `deliverReply` activity through the `email`
 * ChannelDeliverer and an outbox, so a retried delivery never sends twice.
 *
 * State in `channel_state` (all sealed):
 *   email/imap/<account>     {uidValidity, lastUid}: the last UID fully handled in the mailbox
 *   email/in/<hash>          {kind, at}: a handled inbound Message-ID (turn, approval, refusal, ignored)
 *   email/outbox/<key>       infra/outbox.ts marks: one per reply, notice and refusal
 *   email/gate/<gate>/<addr> {subject, root, token}: the thread of a gate's request to one approver
 *   email/gate-mail/<hash>   {token}: a request mail's Message-ID → its token (replies without the subject)
 *   email/gate-state/<gate>  {closed, at}: the gate was decided, expired or withdrawn
 *   gate-token/<ref>         GateTokens records (infra/gate-tokens.ts)
 *   mission-waits/email/<h>  missions' open waits for a mail (infra/mission-waits.ts; written by the worker)
 *   mission-events/<hash>    a message some mission's wait took (channels/kit/mission-events.ts)
 */
import type { DomainHandle } from '../../infra/storage/index.js';
import type { DelivererRegistry, GateTokenPort, SessionClearPort, TurnSubmitPort } from '../ports.js';
import type { MissionControlPort } from '../../activities/ports.js';
import { createEmailInbound, type EmailMissionPort } from './inbound.js';
import { watchMailbox, type ImapSettings } from './mailbox.js';
import { createEmailOutbound, type SmtpSettings } from './outbound.js';
import { EMAIL_CHANNEL_NAME } from './shared.js';
import { validateEmailAllowlist, type EmailTrustPolicy } from './trust.js';

export { EMAIL_CHANNEL_NAME, type EmailMissionPort, type ImapSettings, type SmtpSettings };
export { smtpFailure } from './outbound.js';

/** Options of `startEmailChannel`. */
export interface EmailChannelOptions {
  imap: ImapSettings;
  smtp: SmtpSettings;
  /** The assistant's address: From of everything it sends; mail from it is ignored. */
  address: string;
  /** Display name in From (default "aivyx"). */
  fromName?: string;
  gateway: TurnSubmitPort & Partial<SessionClearPort>;
  /** The `channel_state` domain handle. */
  storage: DomainHandle;
  trust: EmailTrustPolicy;
  /** Where the `email` deliverer is registered (the worker's `deliveries`). */
  deliveries?: DelivererRegistry;
  /** Gate decisions by mail; without it approval replies are answered "nothing to approve". */
  missions?: EmailMissionPort;
  /** The sender's own missions for `missions` / `cancel <id>` mails; without it those are ordinary messages. */
  missionControl?: MissionControlPort;
  /** MACed single-use approval tokens over this `storage` (`new GateTokens(gateTokenKey(...), storage)`); required for approvals. */
  gateTokens?: GateTokenPort;
  /** Largest total attachment size turned into message parts (default 512 KiB). */
  maxAttachmentBytes?: number;
  /** Largest raw mail fetched whole (default 10 MiB); larger mails are refused from their headers. */
  maxMailBytes?: number;
  /** First start without state: `new` (default) skips what is already in the mailbox, `all` handles it. */
  backlog?: 'new' | 'all';
  /** Reconnect backoff: first delay and cap in ms (default 500 and 60,000). */
  reconnect?: { initialMs?: number; maxMs?: number };
  log?: (line: string) => void;
}

/** A running channel. */
export interface EmailChannel {
  /** True while an IMAP session is open and watching the mailbox. */
  connected(): boolean;
  /** How many IMAP sessions were opened so far (reconnects included). */
  sessions(): number;
  /** Stops watching; turns keep running in Temporal, and their replies are sent by the deliverer. */
  stop(): Promise<void>;
}

type OutboundOptions = Pick<EmailChannelOptions, 'smtp' | 'address' | 'fromName' | 'storage' | 'gateTokens' | 'log'>;

function outboundOf(opts: OutboundOptions) {
  return createEmailOutbound({
    smtp: opts.smtp,
    address: opts.address,
    ...(opts.fromName ? { fromName: opts.fromName } : {}),
    store: opts.storage,
    ...(opts.gateTokens ? { tokens: opts.gateTokens } : {}),
    log: opts.log ?? ((line: string) => console.warn(`[email] ${line}`)),
  });
}

/** Only the sending side, registered as `email` (an `aivyx worker`: a gateway reads the mailbox). */
export function startEmailOutbound(opts: OutboundOptions & { deliveries: DelivererRegistry }): { stop(): Promise<void> } {
  const outbound = outboundOf(opts);
  const unregister = opts.deliveries.register(EMAIL_CHANNEL_NAME, outbound.deliverer);
  return {
    async stop() {
      unregister();
      outbound.close();
    },
  };
}

/** Starts the email channel; resolves once the deliverer is registered (IMAP connects in the background). */
export async function startEmailChannel(opts: EmailChannelOptions): Promise<EmailChannel> {
  validateEmailAllowlist(opts.trust.allowlist);
  const log = opts.log ?? ((line: string) => console.warn(`[email] ${line}`));
  const store = opts.storage;
  const outbound = outboundOf({ ...opts, log });
  const unregister = opts.deliveries?.register(EMAIL_CHANNEL_NAME, outbound.deliverer);
  const maxMail = opts.maxMailBytes ?? 10 * 1024 * 1024;
  const inbound = createEmailInbound({
    address: opts.address,
    store,
    send: outbound.send,
    gateway: opts.gateway,
    trust: opts.trust,
    ...(opts.missions ? { missions: opts.missions } : {}),
    ...(opts.missionControl ? { missionControl: opts.missionControl } : {}),
    ...(opts.gateTokens ? { tokens: opts.gateTokens } : {}),
    maxAttachments: opts.maxAttachmentBytes ?? 512 * 1024,
    maxMail,
    log,
  });
  const box = watchMailbox({
    imap: opts.imap,
    store,
    handleMail: inbound.handleMail,
    maxMail,
    ...(opts.backlog ? { backlog: opts.backlog } : {}),
    ...(opts.reconnect ? { reconnect: opts.reconnect } : {}),
    log,
  });
  return {
    connected: box.connected,
    sessions: box.sessions,
    async stop() {
      await box.stop();
      unregister?.();
      outbound.close();
    },
  };
}
