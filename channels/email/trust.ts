/**
 * Trust for email: resolved from what we verify ourselves with `mailauth` — DKIM signatures that
 * cover the whole body, SPF for the connecting IP an operator-named hop recorded (or that the
 * operator's own verifier recorded in Authentication-Results), and DMARC alignment with the From
 * domain — never from headers a sender can write. A verified, allowlisted sender is SemiTrusted;
 * everything else is Untrusted.
 */
import { authenticate, dmarc as dmarcVerify, type AuthenticateResult, type DKIMResult, type DNSResolver } from 'mailauth';
import type { TrustTier } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import { upstreamSpf } from './auth-results.js';
import { rawHeaders, type RawHeader } from './headers.js';
import { hopClient, type TrustedHop } from './received.js';

/** Tiers an email can have (the ceiling is SemiTrusted). */
export type EmailTier = Extract<TrustTier, 'SemiTrusted' | 'Untrusted'>;

/** What the tier is computed from besides the message. */
export interface EmailTrustPolicy {
  /** Sender addresses (case-insensitive) whose verified mail is SemiTrusted. */
  allowlist: readonly string[];
  /**
   * Our receiving MTA: the connecting IP is read only from the Received header it writes, in its
   * exact format (`received.ts`). Unset (and no `authservId`) → SPF is not evaluated (DKIM alone
   * can verify a sender).
   */
  trustedHop?: TrustedHop;
  /** The authserv-id of our own verifier: SPF from the topmost Authentication-Results header, when it is this one's. */
  authservId?: string;
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
    if (!/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(a))
      throw new AivyxError('Config', `email allowlist entry "${a}" is not an address`, {
        hint: 'use plain addresses, e.g. alice@example.com',
      });
  }
}

/** mailauth reports a signature's `l=` limit at run time but not in its typings. */
type DkimSignature = DKIMResult & { canonBodyLengthLimited?: boolean; canonBodyLengthLimit?: number };

/** A DKIM result we refuse to count, with why; undefined when it may count. */
function refusedSignature(sig: DkimSignature): string | undefined {
  // With `l=`, bytes past the limit are unsigned: anyone may append text the signature still "covers".
  if (sig.canonBodyLengthLimited)
    return `${sig.signingDomain}: refused (l=${sig.canonBodyLengthLimit ?? '?'} leaves the body after that unsigned)`;
  return undefined;
}

/** SPF from the trusted hop (evaluated by mailauth) or the operator's verifier; none otherwise, with why. */
function spfVerdict(
  res: AuthenticateResult,
  headers: readonly RawHeader[],
  hop: ReturnType<typeof hopClient> | undefined,
  policy: EmailTrustPolicy,
): { result: string; domain?: string; reason?: string } {
  if (hop?.ok && res.spf) return { result: res.spf.status.result, domain: res.spf.domain };
  const upstream = policy.authservId ? upstreamSpf(headers, policy.authservId) : undefined;
  if (upstream?.ok) return { result: upstream.result, domain: upstream.domain };
  const reasons = [hop && !hop.ok ? hop.reason : undefined, upstream && !upstream.ok ? upstream.reason : undefined].filter(Boolean);
  return { result: 'none', reason: reasons.join('; ') || 'SPF not evaluated (no trusted hop or authserv-id configured)' };
}

/** Verifies `raw` and resolves its tier under `policy`. */
export async function verifyMail(raw: Buffer, policy: EmailTrustPolicy): Promise<MailVerdict> {
  const headers = rawHeaders(raw);
  const hop = policy.trustedHop ? hopClient(headers, policy.trustedHop) : undefined;
  const client = hop?.ok ? hop : undefined;
  let res: AuthenticateResult;
  try {
    res = await authenticate(raw, {
      ...(client ? { ip: client.ip, helo: client.helo, sender: client.sender } : {}),
      mta: policy.trustedHop?.host ?? 'aivyx.invalid',
      ...(policy.resolver ? { resolver: policy.resolver } : {}),
      ...(policy.minBitLength ? { minBitLength: policy.minBitLength } : {}),
      disableArc: true,
      disableBimi: true,
      // DMARC is evaluated below, over the signatures and the SPF result we accept.
      disableDmarc: true,
    });
  } catch (err) {
    return {
      tier: 'Untrusted',
      from: undefined,
      dkim: 'none',
      spf: 'none',
      dmarc: 'none',
      authenticated: false,
      reasons: [`verification failed: ${(err as Error).message}`],
    };
  }
  const reasons: string[] = [];
  const froms = res.dkim.headerFrom ?? [];
  // RFC 5322 allows one From field; a second one is how display tricks start.
  const fromFields = headers.filter((h) => h.name === 'from').length;
  const from = fromFields === 1 && froms.length === 1 ? froms[0]!.toLowerCase() : undefined;
  if (!from) reasons.push('the message must have exactly one From address');
  const fromDomain = from ? from.slice(from.lastIndexOf('@') + 1) : '';

  const sigs: DkimSignature[] = res.dkim.results ?? [];
  const counted = sigs.filter((r) => r.status.result === 'pass' && !refusedSignature(r));
  const alignedPass = counted.find((r) => Boolean(r.status.aligned) || aligned(r.signingDomain, fromDomain));
  const dkim = alignedPass ? 'pass' : sigs[0] && refusedSignature(sigs[0]) ? 'policy' : (sigs[0]?.status.result ?? 'none');
  const spf = spfVerdict(res, headers, hop, policy);
  const spfAligned = spf.result === 'pass' && aligned(spf.domain, fromDomain);
  const dmarcRes = from
    ? await dmarcVerify({
        headerFrom: from,
        spfDomains: spf.result === 'pass' && spf.domain ? [spf.domain] : [],
        dkimDomains: counted.map((r) => ({
          ...(r.id ? { id: r.id } : {}),
          domain: r.signingDomain,
          ...(r.status.aligned !== undefined ? { aligned: r.status.aligned } : {}),
        })),
        ...(policy.resolver ? { resolver: policy.resolver } : {}),
      })
    : false;
  const dmarc = dmarcRes ? dmarcRes.status.result : 'none';

  let authenticated = Boolean(from) && (alignedPass !== undefined || spfAligned);
  // A published DMARC policy decides (it may demand strict alignment); none published → our relaxed check.
  if (dmarcRes && dmarc !== 'none') authenticated = Boolean(from) && dmarc === 'pass' && (alignedPass !== undefined || spfAligned);
  if (from && !authenticated) {
    if (sigs.length === 0) reasons.push('the message has no DKIM signature');
    else if (!alignedPass)
      reasons.push(
        `no DKIM signature passes for ${fromDomain} (${sigs.map((r) => refusedSignature(r) ?? `${r.signingDomain ?? '?'}: ${r.status.result}`).join(', ')})`,
      );
    if (!spfAligned)
      reasons.push(
        spf.reason ??
          `SPF for ${fromDomain} is ${spf.result}${spf.domain && spf.result === 'pass' ? ` (for ${spf.domain}, not aligned)` : ''}`,
      );
    if (dmarc !== 'none' && dmarc !== 'pass') reasons.push(`DMARC: ${dmarc}`);
  }
  const listed = from !== undefined && policy.allowlist.some((a) => a.toLowerCase() === from);
  if (from && !listed) reasons.push(`${from} is not on the allowlist`);
  const tier: EmailTier = authenticated && listed ? 'SemiTrusted' : 'Untrusted';
  return { tier, from, dkim, spf: spf.result, dmarc, authenticated, reasons: tier === 'SemiTrusted' ? [] : reasons };
}
