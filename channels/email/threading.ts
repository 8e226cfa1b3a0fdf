/**
 * Threads, ids and text for email: a thread (Message-ID / In-Reply-To / References) is a
 * session, a Message-ID is hashed into a safe turn id, quoted text and signatures are stripped
 * before the model sees a message, and approval replies are read from their first line.
 */
import { createHash } from 'node:crypto';
import EmailReplyParser from 'email-reply-parser';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** A Message-ID without angle brackets and surrounding space; undefined when empty. */
export function bareMessageId(id: string | undefined): string | undefined {
  const s = (id ?? '')
    .trim()
    .replace(/^<+|>+$/g, '')
    .trim();
  return s.length > 0 ? s : undefined;
}

/** `<id>` form for headers. */
export function angle(id: string): string {
  return `<${bareMessageId(id) ?? id}>`;
}

/** The ids of a References header (or mailparser's string | string[]), in order. */
export function referenceList(refs: string | string[] | undefined): string[] {
  const all = Array.isArray(refs) ? refs : refs ? [refs] : [];
  return all
    .flatMap((r) => r.split(/\s+/))
    .map((r) => bareMessageId(r))
    .filter((r): r is string => r !== undefined);
}

/** The thread root: the first References id, else In-Reply-To, else the message itself. */
export function threadRoot(messageId: string, inReplyTo: string | undefined, references: readonly string[]): string {
  return references[0] ?? bareMessageId(inReplyTo) ?? messageId;
}

/** The aivyx message id of a mail: a hash of its Message-ID (safe in workflow ids, stable on refetch). */
export function emailMessageId(messageId: string): string {
  return `m-${sha256(messageId).slice(0, 32)}`;
}

/**
 * The session of a thread: its root's Message-ID, hashed, and bound to the sender and tier so a
 * stranger who quotes someone else's References does not join (and read) their conversation.
 */
export function emailSessionId(root: string, from: string, tier: string): string {
  return `thread-${sha256(root).slice(0, 24)}-${sha256(`${from}\n${tier}`).slice(0, 8)}`;
}

/** A stable Message-ID for an outbound mail, derived from its idempotency key. */
export function outboundMessageId(idemKey: string, domain: string): string {
  return `aivyx-${sha256(idemKey).slice(0, 32)}@${domain}`;
}

/** `Re: <subject>` (not doubled). */
export function replySubject(subject: string | undefined): string {
  const s = (subject ?? '').trim();
  if (s === '') return 'Re: your message';
  return /^re:/i.test(s) ? s : `Re: ${s}`;
}

const parser = new EmailReplyParser();

/** Longest body text handed to the model (and to the quote parser). */
export const MAX_BODY_CHARS = 100_000;

/**
 * The new text of a reply: quoted text ("On … wrote:", `>` lines, "-----Original Message-----")
 * and a trailing signature ("-- ") removed by email-reply-parser, whitespace trimmed.
 */
export function stripQuotedText(text: string): string {
  // The parser's regexes run on sender-controlled text (without RE2): bound the work they can be given.
  const normalized = text.slice(0, MAX_BODY_CHARS).replace(/\r\n/g, '\n');
  let visible = parser.parseReply(normalized);
  // Outlook's separator is not always recognised: cut at it ourselves.
  const cut = visible.search(/^-{2,}\s*Original Message\s*-{2,}\s*$/im);
  if (cut >= 0) visible = visible.slice(0, cut);
  return visible.trim();
}

/** A decision read from an approval reply. */
export type ApprovalDecision = { kind: 'approve' } | { kind: 'deny'; reason?: string } | { kind: 'unclear'; line: string };

/** Reads the first non-empty line of a reply's new text: `approve` or `deny [reason]`; anything else is unclear. */
export function parseDecision(text: string): ApprovalDecision {
  const first =
    stripQuotedText(text)
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  if (/^approved?[.!]*$/i.test(first)) return { kind: 'approve' };
  const deny = /^(?:deny|denied)(?:[.!]*$|[\s:,-]+(.*)$)/i.exec(first);
  if (deny) {
    const reason = deny[1]?.trim();
    return reason ? { kind: 'deny', reason: reason.slice(0, 500) } : { kind: 'deny' };
  }
  return { kind: 'unclear', line: first.slice(0, 200) };
}
