/**
 * The email channel: imapflow IDLE on one mailbox for inbound mail, nodemailer over SMTP for
 * replies and approval requests. Each mail's tier comes from our own DKIM/SPF/DMARC check
 * (`trust.ts`); a thread is a session; the turn id is a hash of the Message-ID, so a mail fetched
 * twice runs one turn. Replies are sent by the `deliverReply` activity through the `email`
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
 */
import { createHash } from 'node:crypto';
import { ImapFlow } from 'imapflow';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import nodemailer from 'nodemailer';
import type { ChannelDeliverer, DeliveryRegistry, ReplyToDeliver } from '../../activities/delivery-activities.js';
import { toApplicationFailure } from '../../activities/failure.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import type { ChannelFacts, ReplyRoute } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { ContentPart, Message } from '../../core/message.js';
import type { GateApproverRef } from '../../machines/index.js';
import { GateTokens } from '../../infra/gate-tokens.js';
import { createOutbox, type OutboxResult } from '../../infra/outbox.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import type { MissionGateway } from '../mission-gateway.js';
import type { TurnGateway } from '../turn-gateway.js';
import { checkApprovalToken } from '../kit/approve-by-token.js';
import { createBackoff } from '../kit/backoff.js';
import { asksForDecision, emailOutcomeText, gateBody, gateSubject } from './render.js';
import { angle, bareMessageId, emailMessageId, emailSessionId, outboundMessageId, parseDecision, referenceList, replySubject, stripQuotedText, threadRoot } from './threading.js';
import { validateEmailAllowlist, verifyMail, type EmailTrustPolicy, type MailVerdict } from './trust.js';

/** Channel instance name used in turn ids, session ids and the delivery registry. */
export const EMAIL_CHANNEL_NAME = 'email';

/** What the channel needs of missions (a `MissionGateway` satisfies it). */
export type EmailMissionPort = Pick<MissionGateway, 'decideAs'>;

/** IMAP account and mailbox. */
export interface ImapSettings {
  host: string;
  port: number;
  /** Implicit TLS (port 993). Default false. */
  secure?: boolean;
  /** STARTTLS on a plain connection: `required`, `opportunistic` (default) or `never`. */
  startTls?: 'required' | 'opportunistic' | 'never';
  user: string;
  password: string;
  /** Default INBOX. */
  mailbox?: string;
}

/** SMTP submission server. */
export interface SmtpSettings {
  host: string;
  port: number;
  /** Implicit TLS (port 465). Default false. */
  secure?: boolean;
  /** Refuse to send unless STARTTLS succeeds. Default false. */
  requireTls?: boolean;
  user?: string;
  password?: string;
}

/** Options of `startEmailChannel`. */
export interface EmailChannelOptions {
  imap: ImapSettings;
  smtp: SmtpSettings;
  /** The assistant's address: From of everything it sends; mail from it is ignored. */
  address: string;
  /** Display name in From (default "aivyx"). */
  fromName?: string;
  gateway: TurnGateway;
  /** The `channel_state` domain handle. */
  storage: DomainHandle;
  trust: EmailTrustPolicy;
  /** Where the `email` deliverer is registered (the worker's `deliveries`). */
  deliveries?: DeliveryRegistry;
  /** Gate decisions by mail; without it approval replies are answered "nothing to approve". */
  missions?: EmailMissionPort;
  /** MACed single-use approval tokens over this `storage` (`new GateTokens(gateTokenKey(...), storage)`); required for approvals. */
  gateTokens?: GateTokens;
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
  /** The outbound side (also registered in `deliveries` when given). */
  deliverer: ChannelDeliverer;
  /** True while an IMAP session is open and watching the mailbox. */
  connected(): boolean;
  /** How many IMAP sessions were opened so far (reconnects included). */
  sessions(): number;
  /** Stops watching; turns keep running in Temporal, and their replies are sent by the deliverer. */
  stop(): Promise<void>;
}

interface ImapState {
  uidValidity: string;
  lastUid: number;
}

interface GateThread {
  subject: string;
  root: string;
  token: string;
}

type InboundKind = 'turn' | 'approval' | 'refused' | 'ignored';

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');
const short = (s: string): string => sha(s).slice(0, 32);

/** An SMTP failure as the delivery activity should see it: 4xx and network errors retry, 5xx do not. */
export function smtpFailure(err: unknown): Error {
  const e = err as { responseCode?: number; message?: string; code?: string };
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const permanent = code !== undefined && code >= 500;
  return toApplicationFailure(
    new AivyxError('Channel', `SMTP ${code ?? e.code ?? 'error'}: ${e.message ?? String(err)}`, {
      hint: permanent ? 'the server refused the message permanently; check the address and the SMTP account' : 'a temporary failure: the delivery is retried',
      detail: { ...(code !== undefined ? { responseCode: code } : {}), retryable: !permanent },
    }),
  );
}

function addresses(a: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(a) ? a : a ? [a] : [];
  return list.flatMap((o) => o.value.map((v) => (v.address ?? '').toLowerCase())).filter((s) => s.length > 0);
}

/** Starts the email channel; resolves once the deliverer is registered (IMAP connects in the background). */
export async function startEmailChannel(opts: EmailChannelOptions): Promise<EmailChannel> {
  validateEmailAllowlist(opts.trust.allowlist);
  const log = opts.log ?? ((line: string) => console.warn(`[email] ${line}`));
  const store = opts.storage;
  const outbox = createOutbox(store, 'email/outbox');
  const self = opts.address.toLowerCase();
  const domain = self.slice(self.lastIndexOf('@') + 1);
  const mailbox = opts.imap.mailbox ?? 'INBOX';
  const account = `${opts.imap.user}@${opts.imap.host}:${opts.imap.port}/${mailbox}`;
  const stateKey = `email/imap/${short(account)}`;
  const maxAttachments = opts.maxAttachmentBytes ?? 512 * 1024;
  const maxMail = opts.maxMailBytes ?? 10 * 1024 * 1024;
  const tokens = opts.gateTokens;
  const transport = nodemailer.createTransport({
    host: opts.smtp.host,
    port: opts.smtp.port,
    secure: opts.smtp.secure ?? false,
    requireTLS: opts.smtp.requireTls ?? false,
    ...(opts.smtp.user ? { auth: { user: opts.smtp.user, pass: opts.smtp.password ?? '' } } : {}),
  });
  const from = { name: opts.fromName ?? 'aivyx', address: opts.address };

  interface OutboundMail {
    to: string;
    subject: string;
    text: string;
    inReplyTo?: string;
    references?: readonly string[];
    replyTo?: string;
  }

  /** Sends `mail` at most once per `idemKey`; its Message-ID derives from the key. SMTP errors throw (the outbox un-marks). */
  async function send(idemKey: string, mail: OutboundMail, after?: (messageId: string) => Promise<void>): Promise<OutboxResult<string>> {
    const messageId = outboundMessageId(idemKey, domain);
    const result = await outbox.once(idemKey, async () => {
      try {
        await transport.sendMail({
          from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          messageId: angle(messageId),
          ...(mail.inReplyTo ? { inReplyTo: angle(mail.inReplyTo) } : {}),
          ...(mail.references && mail.references.length > 0 ? { references: mail.references.map(angle).join(' ') } : {}),
          ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
          // RFC 3834: marks our mail as automatic so well-behaved responders do not answer it.
          headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
        });
      } catch (err) {
        throw smtpFailure(err);
      }
      return messageId;
    });
    if (result.status === 'uncertain') log(`a send for ${idemKey} may have happened before a crash; not sending it again`);
    // Outside the outbox: a failure here must not un-mark a mail that went out.
    if (result.status === 'sent') await after?.(messageId);
    return result;
  }

  /** A plus-address carrying the token, when our address has the form local@domain. */
  function plusAddress(token: string): string {
    const at = opts.address.lastIndexOf('@');
    return `${opts.address.slice(0, at)}+${token}@${opts.address.slice(at + 1)}`;
  }

  const deliverer: ChannelDeliverer = {
    async deliverReply(reply: ReplyToDeliver, idemKey: string): Promise<void> {
      const r = reply.route;
      if (typeof r.to !== 'string') throw toApplicationFailure(new AivyxError('Config', `reply route of ${reply.turnId} has no address`));
      await send(idemKey, {
        to: r.to,
        subject: typeof r.subject === 'string' ? r.subject : 'Re: your message',
        text: emailOutcomeText(reply.outcome, reply.turnId),
        ...(typeof r.inReplyTo === 'string' ? { inReplyTo: r.inReplyTo } : {}),
        ...(Array.isArray(r.references) ? { references: r.references } : {}),
      });
    },

    async notifyGate(notice: MissionNotice, approvers: GateApproverRef[], idemKey: string): Promise<void> {
      const gate = short(notice.gateId);
      if (!asksForDecision(notice.kind)) await store.putJson(`email/gate-state/${gate}`, { closed: notice.kind, at: Date.now() });
      for (const a of approvers) {
        const address = a.identity.toLowerCase();
        const threadKey = `email/gate/${gate}/${short(address)}`;
        const key = `${idemKey}/${short(address)}`;
        if ((await outbox.sent(key)) !== undefined) continue; // a retried activity: no new token for a mail already sent
        const { mail, thread } = await gateMail(notice, address, threadKey);
        await send(key, mail, async (messageId) => {
          // The thread exists once its first mail went out: reminders and closing notices reply in it.
          if (thread && !(await store.getJson<GateThread>(threadKey))) {
            await store.putJson(threadKey, { ...thread, root: messageId } satisfies GateThread);
            await store.putJson(`email/gate-mail/${short(messageId)}`, { token: thread.token });
          }
        });
      }
    },
  };

  /** The mail for one approver: in the gate's thread when there is one, else a new request (with a token) or a plain notice. */
  async function gateMail(notice: MissionNotice, address: string, threadKey: string): Promise<{ mail: OutboundMail; thread?: Omit<GateThread, 'root'> }> {
    const existing = await store.getJson<GateThread>(threadKey);
    const text = gateBody(notice, address);
    if (existing) return { mail: { to: address, subject: replySubject(existing.subject), text, inReplyTo: existing.root, references: [existing.root], replyTo: plusAddress(existing.token) } };
    if (asksForDecision(notice.kind) && tokens) {
      const token = await tokens.issue({ gateId: notice.gateId, missionId: notice.missionId, identity: address, channel: EMAIL_CHANNEL_NAME });
      const subject = gateSubject(notice, token);
      return { mail: { to: address, subject, text, replyTo: plusAddress(token) }, thread: { subject, token } };
    }
    return { mail: { to: address, subject: `[aivyx] gate ${notice.gateId}: ${notice.kind}`, text } };
  }

  const unregister = opts.deliveries?.register(EMAIL_CHANNEL_NAME, deliverer);

  // ---- inbound ----

  /** Answers an inbound mail once (refusals, approval answers), in its thread. */
  async function answer(mid: string, to: string, parsed: ParsedMail, text: string, suffix = 'answer'): Promise<void> {
    const refs = referenceList(parsed.references);
    try {
      await send(`in/${short(mid)}/${suffix}`, { to, subject: replySubject(parsed.subject), text, inReplyTo: mid, references: [...refs, mid].slice(-20) });
    } catch (err) {
      // Best effort: a recipient that refuses our answer (a spoofed From, greylisting) must not stall the mailbox.
      log(`could not answer ${mid}: ${(err as Error).message}`);
    }
  }

  function isAutomatic(parsed: ParsedMail, fromAddr: string | undefined): boolean {
    const auto = parsed.headers.get('auto-submitted');
    if (typeof auto === 'string' && auto.trim().toLowerCase() !== 'no') return true;
    const precedence = parsed.headers.get('precedence');
    if (typeof precedence === 'string' && /^(bulk|junk|list)$/i.test(precedence.trim())) return true;
    return fromAddr === undefined || fromAddr === self || /^(mailer-daemon|postmaster)@/i.test(fromAddr);
  }

  async function handleApproval(token: string, verdict: MailVerdict, parsed: ParsedMail, mid: string): Promise<InboundKind> {
    const to = verdict.from!;
    const refuse = async (why: string): Promise<InboundKind> => {
      await answer(mid, to, parsed, `Your reply changed nothing: ${why}`);
      return 'refused';
    };
    if (!tokens || !opts.missions) return refuse('there is nothing to approve by mail here.');
    const check = await checkApprovalToken(tokens, token, EMAIL_CHANNEL_NAME, verdict.from!);
    if (!check.ok && check.why === 'invalid') return refuse(`${check.reason}.`);
    if (!check.ok && check.why === 'other-channel') return refuse('this approval request was not sent by email.');
    if (!check.ok && check.why === 'someone-else') return refuse(`this approval request was sent to another address; a reply from ${to} cannot decide it.`);
    if (verdict.tier !== 'SemiTrusted') return refuse(`your mail could not be verified (${verdict.reasons.join('; ')}).`);
    if (!check.ok) return refuse(`${check.reason}; only the first reply counts.`);
    const grant = check;
    const closed = await store.getJson<{ closed: string }>(`email/gate-state/${short(grant.gateId)}`);
    if (closed) return refuse(`gate ${grant.gateId} is closed (${closed.closed}).`);
    const decision = parseDecision(parsed.text ?? '');
    if (decision.kind === 'unclear') {
      await answer(mid, to, parsed, `I could not tell what you decided${decision.line ? ` from "${decision.line}"` : ''}. Reply again with "approve" or "deny <reason>" as the first line.`);
      return 'refused';
    }
    try {
      await opts.missions.decideAs(decision.kind, grant.gateId, { identity: to, channel: EMAIL_CHANNEL_NAME, trustTier: verdict.tier }, decision.kind === 'deny' ? decision.reason : undefined);
    } catch (err) {
      const message = err instanceof AivyxError ? err.message : (err as Error).message;
      return refuse(`${message}.`);
    }
    await tokens.markUsed(token, decision.kind);
    return 'approval';
  }

  async function contentOf(parsed: ParsedMail): Promise<ContentPart[] | { refuse: string }> {
    const parts: ContentPart[] = [];
    const text = stripQuotedText(parsed.text ?? '');
    if (text) parts.push({ type: 'text', text });
    else if (parsed.subject) parts.push({ type: 'text', text: parsed.subject });
    const files = parsed.attachments.filter((a) => !a.related || a.contentType.startsWith('image/'));
    const total = files.reduce((n, a) => n + a.size, 0);
    if (total > maxAttachments) return { refuse: `the attachments are ${Math.ceil(total / 1024)} KiB; the limit is ${Math.floor(maxAttachments / 1024)} KiB. Send smaller files, or put them somewhere I can read.` };
    for (const a of files) {
      const data = a.content.toString('base64');
      const filename = a.filename;
      parts.push(a.contentType.startsWith('image/') ? { type: 'image', mime: a.contentType, data, ...(filename ? { filename } : {}) } : { type: 'document', mime: a.contentType, data, ...(filename ? { filename } : {}) });
    }
    return parts;
  }

  async function handleTurn(verdict: MailVerdict, parsed: ParsedMail, mid: string): Promise<InboundKind> {
    const sender = verdict.from!;
    const content = await contentOf(parsed);
    if (!Array.isArray(content)) {
      await answer(mid, sender, parsed, `Sorry, I cannot take that: ${content.refuse}`);
      return 'refused';
    }
    if (content.length === 0) return 'ignored';
    const refs = referenceList(parsed.references);
    const root = threadRoot(mid, parsed.inReplyTo, refs);
    const facts: ChannelFacts = { name: EMAIL_CHANNEL_NAME, platform: 'Email', trustTier: verdict.tier, sessionId: emailSessionId(root, sender, verdict.tier), sender };
    const message: Message = { id: emailMessageId(mid), sessionId: facts.sessionId, content, receivedAt: parsed.date?.getTime() ?? Date.now() };
    const route: ReplyRoute = { to: sender, inReplyTo: mid, references: [...refs, mid].slice(-20), subject: replySubject(parsed.subject) };
    try {
      const turn = await opts.gateway.start(facts, message, () => undefined, route);
      // The turn delivers its own reply (deliverReply); the outcome is not needed here.
      turn.outcome.catch(() => undefined);
    } catch (err) {
      if (err instanceof AivyxError && err.kind === 'Channel') {
        await answer(mid, sender, parsed, `Sorry, I cannot take that: ${err.message}${err.hint ? ` (${err.hint})` : ''}`);
        return 'refused';
      }
      throw err;
    }
    return 'turn';
  }

  /** Handles one fetched mail, at most once per Message-ID; throws when it could not be handled (retry later). */
  async function handleMail(raw: Buffer, truncated: boolean): Promise<void> {
    const parsed = await simpleParser(raw);
    const mid = bareMessageId(parsed.messageId) ?? `synthetic-${short(raw.toString('latin1'))}@aivyx.invalid`;
    const doneKey = `email/in/${short(mid)}`;
    if (await store.getJson(doneKey)) return;
    const fromAddr = addresses(parsed.from)[0];
    let kind: InboundKind;
    if (isAutomatic(parsed, fromAddr)) kind = 'ignored';
    else if (truncated) {
      await answer(mid, fromAddr!, parsed, `Sorry, I cannot take that: the mail is larger than ${Math.floor(maxMail / (1024 * 1024))} MiB.`);
      kind = 'refused';
    } else {
      const verdict = await verifyMail(raw, opts.trust);
      if (!verdict.from) kind = 'ignored';
      else {
        const viaThread = bareMessageId(parsed.inReplyTo) ? (await store.getJson<{ token: string }>(`email/gate-mail/${short(bareMessageId(parsed.inReplyTo)!)}`))?.token : undefined;
        const token = GateTokens.find(parsed.subject ?? '') ?? addresses(parsed.to).map((a) => GateTokens.find(a)).find(Boolean) ?? viaThread;
        kind = token ? await handleApproval(token, verdict, parsed, mid) : await handleTurn(verdict, parsed, mid);
        log(`${mid}: ${kind} (${verdict.tier}${verdict.reasons.length ? `: ${verdict.reasons.join('; ')}` : ''})`);
      }
    }
    await store.putJson(doneKey, { kind, at: Date.now() });
  }

  let stopped = false;
  let client: ImapFlow | undefined;
  let isConnected = false;
  let sessionCount = 0;

  async function loadState(uidValidity: string, uidNext: number): Promise<ImapState> {
    const s = await store.getJson<ImapState>(stateKey);
    if (s && s.uidValidity === uidValidity) return s;
    // A new UIDVALIDITY renumbers the mailbox: start over; Message-IDs keep handled mail from running again.
    const fresh: ImapState = { uidValidity, lastUid: !s && (opts.backlog ?? 'new') === 'new' ? uidNext - 1 : 0 };
    if (s) log(`UIDVALIDITY of ${mailbox} changed (${s.uidValidity} → ${uidValidity}); re-reading it`);
    await store.putJson(stateKey, fresh);
    return fresh;
  }

  /** One IMAP session: open the mailbox, handle what is new, then IDLE until the connection closes. */
  async function session(c: ImapFlow): Promise<void> {
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    const box = await c.mailboxOpen(mailbox);
    let state = await loadState(String(box.uidValidity), box.uidNext);
    let draining: Promise<void> | undefined;
    let again = false;
    const drainOnce = async (): Promise<void> => {
      const found = await c.search({ uid: `${state.lastUid + 1}:*` }, { uid: true });
      const uids = (found || []).filter((u) => u > state.lastUid).sort((a, b) => a - b);
      for (const uid of uids) {
        if (stopped) return;
        const meta = await c.fetchOne(String(uid), { uid: true, size: true }, { uid: true });
        const big = meta !== false && (meta.size ?? 0) > maxMail;
        const msg = await c.fetchOne(String(uid), { uid: true, source: big ? { maxLength: 64 * 1024 } : true }, { uid: true });
        if (msg && msg.source) await handleMail(msg.source, big);
        state = { ...state, lastUid: uid };
        await store.putJson(stateKey, state);
      }
    };
    const drain = (): Promise<void> => {
      if (draining) {
        again = true;
        return draining;
      }
      draining = (async () => {
        try {
          do {
            again = false;
            await drainOnce();
          } while (again && !stopped);
        } catch (err) {
          // Not handled (Temporal or the database is down): reconnect with backoff and read it again.
          if (!stopped) log(`handling new mail failed: ${(err as Error).message}; reconnecting`);
          c.close();
        } finally {
          draining = undefined;
        }
      })();
      return draining;
    };
    c.on('exists', () => void drain());
    isConnected = true;
    sessionCount++;
    await drain();
    await closed;
    isConnected = false;
  }

  const backoff = createBackoff(opts.reconnect?.initialMs ?? 500, opts.reconnect?.maxMs ?? 60_000);

  async function run(): Promise<void> {
    while (!stopped) {
      const c = new ImapFlow({
        host: opts.imap.host,
        port: opts.imap.port,
        secure: opts.imap.secure ?? false,
        ...(opts.imap.startTls === 'required' ? { doSTARTTLS: true } : opts.imap.startTls === 'never' ? { doSTARTTLS: false } : {}),
        auth: { user: opts.imap.user, pass: opts.imap.password },
        logger: false,
        // IDLE soon after our own commands, so new mail is seen at once; restarted every 5 min for NAT boxes.
        autoIdleDelay: 200,
        maxIdleTime: 5 * 60_000,
      } as ConstructorParameters<typeof ImapFlow>[0]);
      c.on('error', (err: Error) => {
        if (!stopped) log(`IMAP: ${err.message}`);
      });
      client = c;
      try {
        await c.connect();
        backoff.reset();
        await session(c);
      } catch (err) {
        if (!stopped) log(`IMAP session: ${(err as Error).message}`);
      } finally {
        isConnected = false;
        c.close();
      }
      if (stopped) return;
      log(`IMAP connection closed; reconnecting in ${backoff.next} ms`);
      await backoff.wait();
    }
  }

  const loop = run();
  return {
    deliverer,
    connected: () => isConnected,
    sessions: () => sessionCount,
    async stop() {
      stopped = true;
      backoff.wake();
      try {
        await client?.logout();
      } catch {
        client?.close();
      }
      await loop;
      unregister?.();
      transport.close();
    },
  };
}
