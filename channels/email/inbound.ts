/**
 * E-mail inbound: each fetched mail is handled at most once per Message-ID (a durable mark), as a
 * turn (a thread is a session), an approval answer (a token in the subject, the plus-address or the
 * thread, checked against the DKIM/SPF-verified sender), a refusal, or ignored (automatic mail).
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import type { ChannelFacts, ReplyRoute } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { ContentPart, Message } from '../../core/message.js';
import { GateTokens } from '../../infra/gate-tokens.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { checkApprovalToken } from '../kit/approve-by-token.js';
import {
  CLEAR_COMMAND,
  type GateDecisionPort,
  type GateTokenPort,
  type MissionEventPort,
  type MissionStatusPort,
  type SessionClearPort,
  type TurnSubmitPort,
} from '../ports.js';
import type { EmailOutbound } from './outbound.js';
import { addresses, EMAIL_CHANNEL_NAME, short } from './shared.js';
import {
  bareMessageId,
  emailMessageId,
  emailSessionId,
  parseDecision,
  referenceList,
  replySubject,
  stripQuotedText,
  threadRoot,
} from './threading.js';
import { mailMissionCommand } from './mission-commands.js';
import { confirmationGateId, confirmationMissionId, turnWorkflowId } from '../../workflows/turn-ids.js';
import type { MissionControlPort } from '../../activities/ports.js';
import { verifyMail, type EmailTrustPolicy, type MailVerdict } from './trust.js';

/** What the channel needs of missions (a `MissionGateway` satisfies it). */
export type EmailMissionPort = GateDecisionPort & MissionEventPort & MissionStatusPort;

type InboundKind = 'turn' | 'approval' | 'command' | 'mission-event' | 'refused' | 'ignored';

export interface EmailInboundDeps {
  address: string;
  store: DomainHandle;
  send: EmailOutbound['send'];
  /** Turns; `/clear` mails need `clearSession` (without it they are ordinary messages). */
  gateway: TurnSubmitPort & Partial<SessionClearPort>;
  trust: EmailTrustPolicy;
  missions?: EmailMissionPort;
  /** For `missions` / `cancel <id>` mails (channels/email/mission-commands.ts); without it they are ordinary messages. */
  missionControl?: MissionControlPort;
  tokens?: GateTokenPort;
  maxAttachments: number;
  maxMail: number;
  log(line: string): void;
}

/** Handles one fetched mail; throws when it could not be handled (the mailbox reads it again later). */
export function createEmailInbound(deps: EmailInboundDeps): { handleMail(raw: Buffer, truncated: boolean): Promise<void> } {
  const { store, send, tokens, maxAttachments, maxMail, log } = deps;
  const self = deps.address.toLowerCase();
  /** Answers an inbound mail once (refusals, approval answers), in its thread. */
  async function answer(mid: string, to: string, parsed: ParsedMail, text: string, suffix = 'answer'): Promise<void> {
    const refs = referenceList(parsed.references);
    try {
      await send(`in/${short(mid)}/${suffix}`, {
        to,
        subject: replySubject(parsed.subject),
        text,
        inReplyTo: mid,
        references: [...refs, mid].slice(-20),
      });
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
    if (!tokens || !deps.missions) return refuse('there is nothing to approve by mail here.');
    const check = await checkApprovalToken(tokens, token, EMAIL_CHANNEL_NAME, verdict.from!);
    if (!check.ok && check.why === 'invalid') return refuse(`${check.reason}.`);
    if (!check.ok && check.why === 'other-channel') return refuse('this approval request was not sent by email.');
    if (!check.ok && check.why === 'someone-else') {
      const kind = parseDecision(parsed.text ?? '').kind === 'deny' ? 'deny' : 'approve';
      const approver = { identity: to, channel: EMAIL_CHANNEL_NAME };
      await deps.missions.rejectDecision({
        gateId: check.gateId,
        kind,
        approver,
        reason: 'a request mailed to someone else',
        eventId: mid,
      });
      return refuse(`this approval request was sent to another address; a reply from ${to} cannot decide it.`);
    }
    if (verdict.tier !== 'SemiTrusted') return refuse(`your mail could not be verified (${verdict.reasons.join('; ')}).`);
    if (!check.ok) return refuse(`${check.reason}; only the first reply counts.`);
    const grant = check;
    const closed = await store.getJson<{ closed: string }>(`email/gate-state/${short(grant.gateId)}`);
    if (closed) return refuse(`gate ${grant.gateId} is closed (${closed.closed}).`);
    const decision = parseDecision(parsed.text ?? '');
    if (decision.kind === 'unclear') {
      await answer(
        mid,
        to,
        parsed,
        `I could not tell what you decided${decision.line ? ` from "${decision.line}"` : ''}. Reply again with "approve" or "deny <reason>" as the first line.`,
      );
      return 'refused';
    }
    try {
      await deps.missions.decideAs(
        decision.kind,
        grant.gateId,
        { identity: to, channel: EMAIL_CHANNEL_NAME, trustTier: verdict.tier },
        decision.kind === 'deny' ? decision.reason : undefined,
      );
    } catch (err) {
      const message = err instanceof AivyxError ? err.message : (err as Error).message;
      return refuse(`${message}.`);
    }
    await tokens.markUsed(token, decision.kind);
    return 'approval';
  }

  /**
   * "approve" (or "deny") with no token, in the thread of a request that waits at its confirmation
   * gate: never a decision (approvals answer the request mailed to the approvers), refused and
   * audited as an attempt on that gate. Undefined when the thread waits at no gate: an ordinary mail.
   */
  async function tokenlessDecision(verdict: MailVerdict, parsed: ParsedMail, mid: string): Promise<InboundKind | undefined> {
    const decision = parseDecision(parsed.text ?? '');
    if (decision.kind === 'unclear' || !deps.missions) return undefined;
    const turnId = turnWorkflowId(EMAIL_CHANNEL_NAME, emailMessageId(threadRoot(mid, parsed.inReplyTo, referenceList(parsed.references))));
    const gateId = confirmationGateId(turnId);
    const status = await deps.missions.show(confirmationMissionId(turnId)).catch(() => undefined);
    if (status?.gate?.gateId !== gateId || status.gate.state === 'approved' || status.gate.state === 'denied') return undefined;
    const approver = { identity: verdict.from!, channel: EMAIL_CHANNEL_NAME };
    await deps.missions.rejectDecision({
      gateId,
      kind: decision.kind,
      approver,
      reason: 'a reply without the request token',
      eventId: mid,
    });
    await answer(
      mid,
      verdict.from!,
      parsed,
      'Your reply changed nothing: a decision is made by replying to the approval request itself, which went to the people who may decide it.',
    );
    return 'refused';
  }

  async function contentOf(parsed: ParsedMail): Promise<ContentPart[] | { refuse: string }> {
    const parts: ContentPart[] = [];
    const text = stripQuotedText(parsed.text ?? '');
    if (text) parts.push({ type: 'text', text });
    else if (parsed.subject) parts.push({ type: 'text', text: parsed.subject });
    const files = parsed.attachments.filter((a) => !a.related || a.contentType.startsWith('image/'));
    const total = files.reduce((n, a) => n + a.size, 0);
    if (total > maxAttachments)
      return {
        refuse: `the attachments are ${Math.ceil(total / 1024)} KiB; the limit is ${Math.floor(maxAttachments / 1024)} KiB. Send smaller files, or put them somewhere I can read.`,
      };
    for (const a of files) {
      const data = a.content.toString('base64');
      const filename = a.filename;
      parts.push(
        a.contentType.startsWith('image/')
          ? { type: 'image', mime: a.contentType, data, ...(filename ? { filename } : {}) }
          : { type: 'document', mime: a.contentType, data, ...(filename ? { filename } : {}) },
      );
    }
    return parts;
  }

  /** The facts of a mail from `verdict`'s sender: its session is its thread, per sender and tier. */
  function factsOf(verdict: MailVerdict, parsed: ParsedMail, mid: string): ChannelFacts {
    const sender = verdict.from!;
    const root = threadRoot(mid, parsed.inReplyTo, referenceList(parsed.references));
    return {
      name: EMAIL_CHANNEL_NAME,
      platform: 'Email',
      trustTier: verdict.tier,
      sessionId: emailSessionId(root, sender, verdict.tier),
      sender,
    };
  }

  /**
   * A mail whose new text is `/clear` clears its thread's conversation (that sender's, at that tier:
   * a forged From lands in another session) and is answered; true when it was one. Clearing only
   * removes context, so whoever may write into a conversation may clear it.
   */
  async function clearCommand(verdict: MailVerdict, parsed: ParsedMail, mid: string): Promise<boolean> {
    if (stripQuotedText(parsed.text ?? '').trim() !== CLEAR_COMMAND || !deps.gateway.clearSession) return false;
    const { text } = await deps.gateway.clearSession(factsOf(verdict, parsed, mid), emailMessageId(mid));
    await answer(mid, verdict.from!, parsed, text, 'clear');
    return true;
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
    const facts = factsOf(verdict, parsed, mid);
    const message: Message = {
      id: emailMessageId(mid),
      sessionId: facts.sessionId,
      content,
      receivedAt: parsed.date?.getTime() ?? Date.now(),
    };
    const route: ReplyRoute = { to: sender, inReplyTo: mid, references: [...refs, mid].slice(-20), subject: replySubject(parsed.subject) };
    try {
      const turn = await deps.gateway.start(facts, message, () => undefined, route);
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

  /**
   * Offers a mail whose From the channel authenticated (aligned DKIM or SPF; allowlisted or not) to
   * missions waiting for it (`waitFor` an e-mail from that sender, in that thread); true when one took it.
   */
  async function offerToMissions(verdict: MailVerdict, parsed: ParsedMail, mid: string): Promise<boolean> {
    if (!deps.missions || !verdict.authenticated || !verdict.from) return false;
    const inReplyTo = bareMessageId(parsed.inReplyTo);
    const refs = referenceList(parsed.references);
    // The root (first) and the latest references: a long thread's root is what a wait usually names.
    const threadIds = [...new Set([...(inReplyTo ? [inReplyTo] : []), ...refs.slice(0, 1), ...refs.slice(-39)])];
    const taken = await deps.missions.offerEvent({
      facts: { source: 'email', from: verdict.from, ...(threadIds.length > 0 ? { threadIds } : {}) },
      eventId: emailMessageId(mid),
      ...(parsed.date ? { sentAt: parsed.date.getTime() } : {}),
    });
    return taken.length > 0;
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
      await answer(
        mid,
        fromAddr!,
        parsed,
        `Sorry, I cannot take that: the mail is larger than ${Math.floor(maxMail / (1024 * 1024))} MiB.`,
      );
      kind = 'refused';
    } else {
      const verdict = await verifyMail(raw, deps.trust);
      if (!verdict.from) kind = 'ignored';
      else {
        const viaThread = bareMessageId(parsed.inReplyTo)
          ? (await store.getJson<{ token: string }>(`email/gate-mail/${short(bareMessageId(parsed.inReplyTo)!)}`))?.token
          : undefined;
        const token =
          GateTokens.find(parsed.subject ?? '') ??
          addresses(parsed.to)
            .map((a) => GateTokens.find(a))
            .find(Boolean) ??
          viaThread;
        // `missions` / `cancel <id>` from a verified sender is answered directly (mission-commands.ts).
        const said = token ? undefined : await mailMissionCommand(deps.missionControl, verdict, parsed.text ?? '');
        if (said !== undefined) await answer(mid, verdict.from, parsed, said, 'missions');
        kind = token
          ? await handleApproval(token, verdict, parsed, mid)
          : said !== undefined || (await clearCommand(verdict, parsed, mid))
            ? 'command'
            : (await offerToMissions(verdict, parsed, mid))
              ? 'mission-event'
              : ((await tokenlessDecision(verdict, parsed, mid)) ?? (await handleTurn(verdict, parsed, mid)));
        log(`${mid}: ${kind} (${verdict.tier}${verdict.reasons.length ? `: ${verdict.reasons.join('; ')}` : ''})`);
      }
    }
    await store.putJson(doneKey, { kind, at: Date.now() });
  }
  return { handleMail };
}
