/**
 * E-mail outbound: replies and approval requests over SMTP (nodemailer), each sent at most once per
 * idempotency key through the outbox; its Message-ID derives from the key. Approval requests carry a
 * single-use token in the subject and a plus-address, and later notices reply in the gate's thread.
 */
import type { LoadedAttachment } from '../../activities/tools/attachment-port.js';
import nodemailer from 'nodemailer';
import type { ChannelDeliverer, ReplyToDeliver } from '../../activities/delivery-activities.js';
import { toApplicationFailure } from '../../activities/failure.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { AivyxError } from '../../core/errors.js';
import type { GateApproverRef } from '../../machines/index.js';
import type { GateTokenPort } from '../ports.js';
import { createOutbox, type OutboxResult } from '../../infra/outbox.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { asksForDecision, emailOutcomeText, gateBody, gateSubject } from './render.js';
import { EMAIL_CHANNEL_NAME, short } from './shared.js';
import { angle, outboundMessageId, replySubject } from './threading.js';

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

/** One mail to send. */
export interface OutboundMail {
  to: string;
  subject: string;
  text: string;
  inReplyTo?: string;
  references?: readonly string[];
  replyTo?: string;
  /** Files attached to the mail (a turn's `fs.attach`): name and type as the store sanitised and detected them. */
  attachments?: readonly LoadedAttachment[];
}

interface GateThread {
  subject: string;
  root: string;
  token: string;
}

/** An SMTP failure as the delivery activity should see it: 4xx and network errors retry, 5xx do not. */
export function smtpFailure(err: unknown): Error {
  const e = err as { responseCode?: number; message?: string; code?: string };
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const permanent = code !== undefined && code >= 500;
  return toApplicationFailure(
    new AivyxError('Channel', `SMTP ${code ?? e.code ?? 'error'}: ${e.message ?? String(err)}`, {
      hint: permanent
        ? 'the server refused the message permanently; check the address and the SMTP account'
        : 'a temporary failure: the delivery is retried',
      detail: { ...(code !== undefined ? { responseCode: code } : {}), retryable: !permanent },
    }),
  );
}

export interface EmailOutboundDeps {
  smtp: SmtpSettings;
  address: string;
  fromName?: string;
  store: DomainHandle;
  tokens?: GateTokenPort;
  log(line: string): void;
}

/** The sending side: `send` (once per key), the deliverer the worker calls, and `close`. */
export interface EmailOutbound {
  send(idemKey: string, mail: OutboundMail, after?: (messageId: string) => Promise<void>): Promise<OutboxResult<string>>;
  deliverer: ChannelDeliverer;
  close(): void;
}

export function createEmailOutbound(deps: EmailOutboundDeps): EmailOutbound {
  const { store, log } = deps;
  const tokens = deps.tokens;
  const outbox = createOutbox(store, 'email/outbox');
  const domain = deps.address.slice(deps.address.lastIndexOf('@') + 1).toLowerCase();
  const transport = nodemailer.createTransport({
    host: deps.smtp.host,
    port: deps.smtp.port,
    secure: deps.smtp.secure ?? false,
    requireTLS: deps.smtp.requireTls ?? false,
    ...(deps.smtp.user ? { auth: { user: deps.smtp.user, pass: deps.smtp.password ?? '' } } : {}),
  });
  const from = { name: deps.fromName ?? 'aivyx', address: deps.address };

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
          ...(mail.attachments?.length
            ? {
                attachments: mail.attachments.map((a) => ({
                  filename: a.name,
                  content: Buffer.from(a.bytes),
                  contentType: a.mime,
                  contentDisposition: 'attachment' as const,
                })),
              }
            : {}),
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
    const at = deps.address.lastIndexOf('@');
    return `${deps.address.slice(0, at)}+${token}@${deps.address.slice(at + 1)}`;
  }

  const deliverer: ChannelDeliverer = {
    /** The `channel.send` tool: `to` is one address (the owner's own, say); sent once per `idemKey`. */
    async send(to: string, text: string, idemKey: string): Promise<void> {
      const address = to.trim();
      // One plain address: no display name, no list, nothing a header could be split on.
      if (!/^[^\s@<>,;"]{1,64}@[^\s@<>,;"]{1,255}$/.test(address))
        throw new AivyxError('Channel', `"${to}" is not one e-mail address`, { hint: 'use one address, like me@example.org' });
      await send(idemKey, { to: address, subject: 'A message from your assistant', text });
    },

    async deliverReply(reply: ReplyToDeliver, idemKey: string): Promise<void> {
      const r = reply.route;
      if (typeof r.to !== 'string') throw toApplicationFailure(new AivyxError('Config', `reply route of ${reply.turnId} has no address`));
      await send(idemKey, {
        to: r.to,
        subject: typeof r.subject === 'string' ? r.subject : 'Re: your message',
        text: emailOutcomeText(reply.outcome, reply.turnId),
        ...(typeof r.inReplyTo === 'string' ? { inReplyTo: r.inReplyTo } : {}),
        ...(Array.isArray(r.references) ? { references: r.references } : {}),
        ...(reply.attachments?.length ? { attachments: reply.attachments } : {}),
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
  async function gateMail(
    notice: MissionNotice,
    address: string,
    threadKey: string,
  ): Promise<{ mail: OutboundMail; thread?: Omit<GateThread, 'root'> }> {
    const existing = await store.getJson<GateThread>(threadKey);
    const text = gateBody(notice, address);
    if (existing)
      return {
        mail: {
          to: address,
          subject: replySubject(existing.subject),
          text,
          inReplyTo: existing.root,
          references: [existing.root],
          replyTo: plusAddress(existing.token),
        },
      };
    if (asksForDecision(notice.kind) && tokens) {
      const token = await tokens.issue({
        gateId: notice.gateId,
        missionId: notice.missionId,
        identity: address,
        channel: EMAIL_CHANNEL_NAME,
      });
      const subject = gateSubject(notice, token);
      return { mail: { to: address, subject, text, replyTo: plusAddress(token) }, thread: { subject, token } };
    }
    return { mail: { to: address, subject: `[aivyx] gate ${notice.gateId}: ${notice.kind}`, text } };
  }
  return { send, deliverer, close: () => transport.close() };
}
