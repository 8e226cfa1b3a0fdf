/**
 * Trust for email: resolved from what we verify ourselves with `mailauth` — DKIM signatures,
 * SPF for the connecting IP our own receiver recorded, and DMARC alignment with the From
 * domain — never from headers a sender can write. A verified, allowlisted sender is
 * SemiTrusted; everything else is Untrusted.
 */
import { authenticate, type AuthenticateResult, type DNSResolver } from 'mailauth';
import type { TrustTier } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';

/** Tiers an email can have (the ceiling is SemiTrusted). */
export type EmailTier = Extract<TrustTier, 'SemiTrusted' | 'Untrusted'>;

/** What the tier is computed from besides the message. */
export interface EmailTrustPolicy {
  /** Sender addresses (case-insensitive) whose verified mail is SemiTrusted. */
  allowlist: readonly string[];
  /**
   * The host name our own receiving MTA writes in `by` of the Received header it adds. Only the
   * topmost Received header is read, and only when it names this host: its IP and HELO feed SPF.
   * Unset → SPF is not evaluated (DKIM alone can verify a sender).
   */
  trustedReceiver?: string;
  /** DNS resolver for DKIM keys, SPF and DMARC records (default: the system's; tests use a map). */
  resolver?: DNSResolver;
  /** Smallest RSA key accepted for DKIM (default 1024 bits). */
  minBitLength?: number;
}

/** The outcome of verifying one message. */
export interface MailVerdict {
  tier: EmailTier;
  /** The single From address, lower-cased; undefined when the From header is unusable. */
  from: string | undefined;
  /** Result of the first DKIM signature aligned with the From domain, else of the first one, else none. */
  dkim: string;
  spf: string;
  dmarc: string;
  /** True when an aligned DKIM or SPF pass authenticates the From domain. */
  authenticated: boolean;
  /** Why the mail is Untrusted (empty when SemiTrusted). */
  reasons: string[];
}

/** An unfolded header of a raw message, in order. */
export interface RawHeader {
  name: string;
  value: string;
}

/** The header fields of a raw RFC 5322 message, unfolded, top first. */
export function rawHeaders(raw: Buffer): RawHeader[] {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = end < 0 ? text : text.slice(0, end);
  const out: RawHeader[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && out.length > 0) out[out.length - 1]!.value += ` ${line.trim()}`;
    else {
      const i = line.indexOf(':');
      if (i > 0) out.push({ name: line.slice(0, i).trim().toLowerCase(), value: line.slice(i + 1).trim() });
    }
  }
  return out;
}

/** The client facts our receiver recorded, from the topmost Received header when it is ours. */
export function trustedClient(headers: readonly RawHeader[], trustedReceiver: string | undefined): { ip: string; helo: string; sender: string } | undefined {
  if (!trustedReceiver) return undefined;
  // Only the topmost header was written by our receiver; anything below came with the message.
  const top = headers.find((h) => h.name === 'received');
  if (!top) return undefined;
  const m = /^from\s+(\S+)\s+\(([^)]*)\)\s+by\s+([^\s;]+)/i.exec(top.value);
  if (!m?.[1] || !m[3] || m[3].toLowerCase() !== trustedReceiver.toLowerCase()) return undefined;
  const ip = /\[(?:IPv6:)?([0-9a-fA-F:.]+)\]/.exec(m[2] ?? '')?.[1];
  if (!ip) return undefined;
  const returnPath = headers.find((h) => h.name === 'return-path')?.value ?? '';
  const sender = /<([^>]*)>/.exec(returnPath)?.[1] ?? returnPath.trim();
  return { ip, helo: m[1], sender };
}

/** Relaxed alignment without a public-suffix list: the same domain, or the From domain under it. */
export function aligned(authDomain: string | undefined, fromDomain: string): boolean {
  if (!authDomain) return false;
  const a = authDomain.toLowerCase().replace(/\.$/, '');
  const f = fromDomain.toLowerCase().replace(/\.$/, '');
  return a === f || (a.includes('.') && f.endsWith(`.${a}`));
}

/** Checks the allowlist entries (addresses). Throws Config for anything else. */
export function validateEmailAllowlist(allowlist: readonly string[]): void {
  for (const a of allowlist) {
    if (!/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(a)) throw new AivyxError('Config', `email allowlist entry "${a}" is not an address`, { hint: 'use plain addresses, e.g. alice@example.com' });
  }
}

/** Verifies `raw` and resolves its tier under `policy`. */
export async function verifyMail(raw: Buffer, policy: EmailTrustPolicy): Promise<MailVerdict> {
  const headers = rawHeaders(raw);
  const client = trustedClient(headers, policy.trustedReceiver);
  let res: AuthenticateResult;
  try {
    res = await authenticate(raw, {
      ...(client ? { ip: client.ip, helo: client.helo, sender: client.sender } : {}),
      mta: policy.trustedReceiver ?? 'aivyx.invalid',
      ...(policy.resolver ? { resolver: policy.resolver } : {}),
      ...(policy.minBitLength ? { minBitLength: policy.minBitLength } : {}),
      disableArc: true,
      disableBimi: true,
    });
  } catch (err) {
    return { tier: 'Untrusted', from: undefined, dkim: 'none', spf: 'none', dmarc: 'none', authenticated: false, reasons: [`verification failed: ${(err as Error).message}`] };
  }
  const reasons: string[] = [];
  const froms = res.dkim.headerFrom ?? [];
  // RFC 5322 allows one From field; a second one is how display tricks start.
  const fromFields = headers.filter((h) => h.name === 'from').length;
  const from = fromFields === 1 && froms.length === 1 ? froms[0]!.toLowerCase() : undefined;
  if (!from) reasons.push('the message must have exactly one From address');
  const fromDomain = from ? from.slice(from.lastIndexOf('@') + 1) : '';

  const sigs = res.dkim.results ?? [];
  const alignedPass = sigs.find((r) => r.status.result === 'pass' && (Boolean(r.status.aligned) || aligned(r.signingDomain, fromDomain)));
  const dkim = alignedPass ? 'pass' : (sigs[0]?.status.result ?? 'none');
  // Without a trusted receiver's record we have no connecting IP: SPF says nothing then.
  const spfResult = client && res.spf ? res.spf.status.result : 'none';
  const spfAligned = client !== undefined && res.spf !== false && res.spf.status.result === 'pass' && aligned(res.spf.domain, fromDomain);
  const dmarc = res.dmarc ? res.dmarc.status.result : 'none';

  let authenticated = Boolean(from) && (alignedPass !== undefined || spfAligned);
  // A published DMARC policy decides (it may demand strict alignment); none published → our relaxed check.
  if (res.dmarc && dmarc !== 'none') authenticated = Boolean(from) && dmarc === 'pass' && (alignedPass !== undefined || spfAligned);
  if (from && !authenticated) {
    if (sigs.length === 0) reasons.push('the message has no DKIM signature');
    else if (!alignedPass) reasons.push(`no DKIM signature passes for ${fromDomain} (${sigs.map((r) => `${r.signingDomain ?? '?'}: ${r.status.result}`).join(', ')})`);
    if (!spfAligned) reasons.push(client ? `SPF for ${fromDomain} is ${spfResult}` : 'SPF not evaluated (no trusted Received header)');
    if (dmarc !== 'none' && dmarc !== 'pass') reasons.push(`DMARC: ${dmarc}`);
  }
  const listed = from !== undefined && policy.allowlist.some((a) => a.toLowerCase() === from);
  if (from && !listed) reasons.push(`${from} is not on the allowlist`);
  const tier: EmailTier = authenticated && listed ? 'SemiTrusted' : 'Untrusted';
  return { tier, from, dkim, spf: spfResult, dmarc, authenticated, reasons: tier === 'SemiTrusted' ? [] : reasons };
}
