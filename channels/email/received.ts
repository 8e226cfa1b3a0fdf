/**
 * The connecting client of a mail, read from the Received header an operator-named hop (our own
 * MX) wrote — and only in that MTA's exact format. The client's HELO lands in that header too, and
 * an attacker chooses it: Postfix writes `from HELO (rdns [IP])` with a HELO that may hold spaces
 * and parentheses, Exim writes `from [IP] (helo=HELO)`. Anything that does not parse as exactly
 * one such clause is refused (SPF is then not evaluated from it), never guessed at.
 */
import { headerTokens, type HeaderToken, type RawHeader } from './headers.js';

/** The MTAs whose Received format we read. */
export const HOP_MTAS = ['postfix', 'exim'] as const;
/** An MTA whose Received format we read. */
export type HopMta = (typeof HOP_MTAS)[number];

/** The receiving hop the operator trusts to record the connecting client. */
export interface TrustedHop {
  /** The host name it writes after `by` (case-insensitive). */
  host: string;
  /** Its Received format. */
  mta: HopMta;
}

/** What the trusted hop recorded about the client, or why it could not be read. */
export type HopClient = { ok: true; ip: string; helo: string; sender: string } | { ok: false; reason: string };

/** The clauses of one Received header (RFC 5321 §4.4), each keyword at most once. */
export interface ReceivedClauses {
  from: { word: string; comments: string[] };
  by: string;
  with?: string;
}

const IP = String.raw`(?:IPv6:)?([0-9A-Fa-f:.]+)`;
const POSTFIX_CLIENT = new RegExp(String.raw`^\S+ \[${IP}\](?::\d+)?$`);
const EXIM_LITERAL = new RegExp(String.raw`^\[${IP}\]$`);
const EXIM_RDNS_COMMENT = new RegExp(String.raw`^\[${IP}\](?::\d+)?((?: (?:helo|ident)=\S+)*)$`);
const EXIM_LITERAL_COMMENT = /^(?:port=\d+)?((?: ?(?:helo|ident)=\S+)*)$/;
/** RFC 3848 protocol names of local delivery (Dovecot or Cyrus LMTP after our MX). */
const LOCAL_DELIVERY = /^lmtps?a?$/i;

/** Parses a Received header into its clauses; undefined when it is ambiguous or malformed. */
export function receivedClauses(value: string): ReceivedClauses | undefined {
  const tokens = headerTokens(value);
  if (!tokens) return undefined;
  // The date follows the only `;`; a second one (e.g. in a HELO) makes the clauses ambiguous.
  const semis = tokens.filter((t) => t.kind === 'semi').length;
  const end = tokens.findIndex((t) => t.kind === 'semi');
  if (semis !== 1) return undefined;
  const clauses = tokens.slice(0, end);
  const keyword = (t: HeaderToken | undefined, k: string): boolean => t?.kind === 'word' && t.text.toLowerCase() === k;
  const count = (k: string): number => clauses.filter((t) => keyword(t, k)).length;
  if (!keyword(clauses[0], 'from') || count('from') !== 1 || count('by') !== 1 || count('with') > 1) return undefined;
  if (clauses.some((t) => t.kind === 'equals')) return undefined;
  const fromWord = clauses[1];
  if (fromWord?.kind !== 'word' || keyword(fromWord, 'by')) return undefined;
  // Between the client's word and `by`: comments only. A HELO with spaces shows up here as extra words.
  const byAt = clauses.findIndex((t) => keyword(t, 'by'));
  const between = clauses.slice(2, byAt);
  if (between.some((t) => t.kind !== 'comment')) return undefined;
  const byWord = clauses[byAt + 1];
  if (byWord?.kind !== 'word') return undefined;
  const withAt = clauses.findIndex((t) => keyword(t, 'with'));
  const withWord = withAt >= 0 ? clauses[withAt + 1] : undefined;
  if (withAt >= 0 && withWord?.kind !== 'word') return undefined;
  return {
    from: { word: fromWord.text, comments: between.map((t) => (t.kind === 'comment' ? t.text : '')) },
    by: byWord.text.toLowerCase(),
    ...(withWord?.kind === 'word' ? { with: withWord.text } : {}),
  };
}

/** The client's IP and HELO from the `from` clause in `mta`'s format; undefined when it does not fit exactly. */
export function hopFromClause(from: ReceivedClauses['from'], mta: HopMta): { ip: string; helo: string } | undefined {
  const [first, ...rest] = from.comments;
  if (mta === 'postfix') {
    // `from HELO (rdns [IP])`, then Postfix's own TLS/auth comments — which never hold an address literal.
    const ip = first !== undefined ? POSTFIX_CLIENT.exec(first)?.[1] : undefined;
    if (!ip || rest.some((c) => c.includes('['))) return undefined;
    return { ip, helo: from.word };
  }
  // Exim: `from rdns ([IP] helo=H)`, `from [IP] (port=N helo=H)` or a bare `from [IP]`; one comment at most.
  if (rest.length > 0) return undefined;
  const literal = EXIM_LITERAL.exec(from.word)?.[1];
  const m = literal ? EXIM_LITERAL_COMMENT.exec(first ?? '') : first !== undefined ? EXIM_RDNS_COMMENT.exec(first) : null;
  if (!m) return undefined;
  const ip = literal ?? m[1]!;
  const items = (literal ? m[1] : m[2]) ?? '';
  const helo = /helo=(\S+)/.exec(items)?.[1] ?? from.word;
  return { ip, helo };
}

/**
 * What `hop` recorded about the client. Received headers are read from the top: local delivery
 * (LMTP) headers above the hop's are skipped; the first other one must be by the hop and parse in
 * its format. The envelope sender is the topmost Return-Path (written at final delivery).
 */
export function hopClient(headers: readonly RawHeader[], hop: TrustedHop): HopClient {
  const host = hop.host.toLowerCase();
  for (const h of headers) {
    if (h.name !== 'received') continue;
    const clauses = receivedClauses(h.value);
    if (!clauses) return { ok: false, reason: 'SPF not evaluated: the topmost Received header is ambiguous' };
    if (clauses.with && LOCAL_DELIVERY.test(clauses.with)) continue;
    if (clauses.by !== host)
      return { ok: false, reason: `SPF not evaluated: the topmost Received header is by ${clauses.by}, not the trusted hop ${host}` };
    const client = hopFromClause(clauses.from, hop.mta);
    if (!client) return { ok: false, reason: `SPF not evaluated: the trusted hop's Received header is not in ${hop.mta}'s format` };
    const returnPath = headers.find((r) => r.name === 'return-path')?.value ?? '';
    const sender = /<([^>]*)>/.exec(returnPath)?.[1] ?? returnPath.trim();
    return { ok: true, ...client, sender };
  }
  return { ok: false, reason: 'SPF not evaluated: no Received header by the trusted hop' };
}
