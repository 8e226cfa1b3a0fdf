/**
 * Trust tiers and their default ceilings (seed Deliverable 5). The effective capability
 * set of a turn is `agentCaps.intersect(tierCeiling(tier))`, computed once per turn.
 *
 * ▲ ("granted only with an explicit qualifier") is represented by the base's ANY_QUALIFIER
 * (`fs.read:/**`, `net.post:*`, `audit.read:*`, ...): a real qualified scope, so rule 2
 * lets a bare agent grant intersect down to it and rule 4 keeps it from granting bare
 * requests. No special case exists in grants() or intersect().
 */
import { AivyxError } from '../errors.js';
import { CapabilitySet } from './capability-set.js';
import { ANY_QUALIFIER } from './qualifier.js';
import { KNOWN_SCOPE_BASES, qualifierKindOf } from './scope.js';

/** The four trust tiers; Kernel is never held by a user-facing channel. */
export type TrustTier = 'Untrusted' | 'SemiTrusted' | 'Trusted' | 'Kernel';

/** All tiers in ascending trust (the seed's `Ord`; display labels Tier 3..0 run the other way). */
export const TRUST_TIERS: readonly TrustTier[] = Object.freeze(['Untrusted', 'SemiTrusted', 'Trusted', 'Kernel'] as const);

/** True when tier `a` is strictly more trusted than `b`. */
export function isMoreTrustedThan(a: TrustTier, b: TrustTier): boolean {
  return TRUST_TIERS.indexOf(a) > TRUST_TIERS.indexOf(b);
}

/** True when `value` names one of the four tiers. */
export function isTrustTier(value: unknown): value is TrustTier {
  return typeof value === 'string' && (TRUST_TIERS as readonly string[]).includes(value);
}

/** Bases that Trusted holds unqualified but whose use gets extra audit ("✓ (audited)" in the seed). */
export const TIER_EXTRA_AUDIT: ReadonlySet<string> = new Set(['fs.delete', 'shell.exec', 'shell.spawn']);

/** Bases in no tier's default ceiling but Kernel's (amendment 2026-12-02-mcp-call-scope): an operator opts in. */
export const NO_TIER_BY_DEFAULT: ReadonlySet<string> = new Set(['mcp.call']);

/** The ▲ form of `base`: its kind's any-qualifier scope string. */
function qualifiedOnly(base: string): string {
  const q = ANY_QUALIFIER[qualifierKindOf(base)];
  if (q === undefined) throw new AivyxError('Internal', `no qualified-only form exists for ${base}`);
  return `${base}:${q}`;
}

/**
 * The seed's per-tier ceiling table, row by row (✓ bare, ▲ qualified-only, absent ⊘).
 * Trusted holds every known base bare, including git.write and mission.* (the seed puts
 * git.write at CEILING_TRUSTED only). SemiTrusted is decided conservatively for the bases
 * the table predates: git.read ▲ (the "narrower tool" the seed recommends for remote
 * `git status`), no git.write, no mission.* (missions commit long-running authority).
 */
const CEILING_SPECS: Readonly<Record<Exclude<TrustTier, 'Kernel'>, readonly string[]>> = {
  Trusted: KNOWN_SCOPE_BASES.filter((b) => !NO_TIER_BY_DEFAULT.has(b)),
  SemiTrusted: [
    qualifiedOnly('fs.read'),
    qualifiedOnly('fs.write'),
    'fs.metadata',
    'net.fetch',
    qualifiedOnly('net.post'),
    'net.dns',
    'llm.call',
    'llm.embed',
    'memory.read',
    'memory.write',
    qualifiedOnly('memory.forget'),
    qualifiedOnly('channel.send'),
    qualifiedOnly('channel.receive'),
    qualifiedOnly('audit.read'),
    'config.read',
    qualifiedOnly('git.read'),
  ],
  Untrusted: ['memory.read:scope:public:*', 'audit.read:public'],
};

const CEILINGS: Readonly<Record<TrustTier, CapabilitySet>> = Object.freeze({
  Kernel: CapabilitySet.from(KNOWN_SCOPE_BASES),
  Trusted: CapabilitySet.from(CEILING_SPECS.Trusted),
  SemiTrusted: CapabilitySet.from(CEILING_SPECS.SemiTrusted),
  Untrusted: CapabilitySet.from(CEILING_SPECS.Untrusted),
});

/** The default ceiling of a tier; Kernel is unlimited (every known base, unqualified). */
export function tierCeiling(tier: TrustTier): CapabilitySet {
  const c = CEILINGS[tier];
  if (!c) throw new AivyxError('Config', `unknown trust tier "${String(tier)}"`, { hint: `one of ${TRUST_TIERS.join(', ')}` });
  return c;
}

/** What a turn may do: the agent's capabilities capped by its channel tier's ceiling. */
export function effectiveCapabilities(agent: CapabilitySet, tier: TrustTier): CapabilitySet {
  return agent.intersect(tierCeiling(tier));
}

/**
 * Reads the tier a channel claims. 'Kernel' is refused with CapabilityDenied (a channel
 * claiming Kernel is a bug or an attack); an unknown name is a Config error.
 */
export function channelTrustTier(name: string): Exclude<TrustTier, 'Kernel'> {
  if (name === 'Kernel') {
    throw new AivyxError('CapabilityDenied', 'a channel cannot claim the Kernel trust tier', { hint: 'give the channel Trusted, SemiTrusted or Untrusted' });
  }
  if (name === 'Untrusted' || name === 'SemiTrusted' || name === 'Trusted') return name;
  throw new AivyxError('Config', `unknown trust tier "${name}"`, { hint: 'use one of Trusted, SemiTrusted, Untrusted (exact spelling)' });
}
