/**
 * Trust tiers and their ceilings (seed Deliverable 5). The effective capability set of a turn is
 * `agentCaps.intersect(tierCeiling(tier, policy))`, computed once per turn.
 *
 * ▲ ("granted only with an explicit qualifier") means: only the qualifiers the operator
 * configured in the {@link TierPolicy} (SemiTrusted), or the seed's named ones (Untrusted
 * `memory.read:scope:public:*`, `audit.read:public`; SemiTrusted `audit.read:own-session`).
 * A ▲ base with nothing configured is absent from the ceiling; it never becomes "everything".
 * Being real qualified scopes, rule 2 lets a bare agent grant intersect down to them and rule 4
 * keeps them from granting bare requests. No special case exists in grants() or intersect().
 */
import { AivyxError } from '../errors.js';
import { CapabilitySet } from './capability-set.js';
import { DATA_DIR_SCOPE_BASE, KNOWN_SCOPE_BASES } from './scope.js';
import { EMPTY_TIER_POLICY, SEMITRUSTED_POLICY_BASES, validateTierPolicy, type TierPolicy } from './tier-policy.js';

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

/** Bases no tier below Kernel ever holds: the data directory (amendment 2026-12-03-tier-policy-data-dir). */
export const KERNEL_ONLY_BASES: ReadonlySet<string> = new Set([DATA_DIR_SCOPE_BASE]);

/** The SemiTrusted `audit.read` ▲: the entries of the turn's own session (the audit.read tool filters by it). */
export const AUDIT_READ_OWN_SESSION = 'audit.read:own-session';

/**
 * The seed's per-tier ceiling table, row by row (✓ bare, ▲ qualified-only, absent ⊘), without
 * the operator-configured ▲ entries. Trusted holds every known base bare except the Kernel-only
 * and opt-in ones, including git.write and mission.* (the seed puts git.write at CEILING_TRUSTED
 * only). SemiTrusted is decided conservatively for the bases the table predates: git.read ▲ (the
 * "narrower tool" the seed recommends for remote `git status`), no git.write, no mission.gate,
 * and mission.create only as the policy names (missions commit long-running authority); likewise
 * mission.list / mission.cancel (`own`: the missions that name the asker). Its ▲ bases come from the policy
 * ({@link SEMITRUSTED_POLICY_BASES}), plus `audit.read` fixed to its own session.
 */
const CEILING_SPECS: Readonly<Record<Exclude<TrustTier, 'Kernel'>, readonly string[]>> = {
  Trusted: KNOWN_SCOPE_BASES.filter((b) => !NO_TIER_BY_DEFAULT.has(b) && !KERNEL_ONLY_BASES.has(b)),
  // `audit.read:public` (reads nothing) keeps the Untrusted ceiling inside SemiTrusted's.
  SemiTrusted: [
    'fs.metadata',
    'net.fetch',
    'net.dns',
    'llm.call',
    'llm.embed',
    'memory.read',
    'memory.write',
    'config.read',
    AUDIT_READ_OWN_SESSION,
    'audit.read:public',
  ],
  Untrusted: ['memory.read:scope:public:*', 'audit.read:public'],
};

const FIXED_CEILINGS: Readonly<Record<TrustTier, CapabilitySet>> = Object.freeze({
  Kernel: CapabilitySet.from(KNOWN_SCOPE_BASES),
  Trusted: CapabilitySet.from(CEILING_SPECS.Trusted),
  SemiTrusted: CapabilitySet.from(CEILING_SPECS.SemiTrusted),
  Untrusted: CapabilitySet.from(CEILING_SPECS.Untrusted),
});

// One SemiTrusted ceiling per policy object: openTurn asks once per turn with the worker's policy.
const semiTrustedCeilings = new WeakMap<TierPolicy, CapabilitySet>();

function semiTrustedCeiling(policy: TierPolicy): CapabilitySet {
  let c = semiTrustedCeilings.get(policy);
  if (c === undefined) {
    const valid = validateTierPolicy(policy);
    const configured = SEMITRUSTED_POLICY_BASES.flatMap((base) => (valid.semiTrusted[base] ?? []).map((q) => `${base}:${q}`));
    c = CapabilitySet.from([...CEILING_SPECS.SemiTrusted, ...configured]);
    semiTrustedCeilings.set(policy, c);
  }
  return c;
}

/**
 * The ceiling of a tier under the operator's policy (default: nothing configured, so the
 * SemiTrusted ▲ bases other than audit.read are absent). Kernel is unlimited (every known base,
 * unqualified); the policy changes only SemiTrusted. Throws InvalidScope for a bad policy.
 */
export function tierCeiling(tier: TrustTier, policy: TierPolicy = EMPTY_TIER_POLICY): CapabilitySet {
  if (tier === 'SemiTrusted') return semiTrustedCeiling(policy);
  const c = FIXED_CEILINGS[tier];
  if (!c) throw new AivyxError('Config', `unknown trust tier "${String(tier)}"`, { hint: `one of ${TRUST_TIERS.join(', ')}` });
  return c;
}

/** What a turn may do: the agent's capabilities capped by its channel tier's ceiling (under `policy`). */
export function effectiveCapabilities(agent: CapabilitySet, tier: TrustTier, policy: TierPolicy = EMPTY_TIER_POLICY): CapabilitySet {
  return agent.intersect(tierCeiling(tier, policy));
}

/**
 * Reads the tier a channel claims. 'Kernel' is refused with CapabilityDenied (a channel
 * claiming Kernel is a bug or an attack); an unknown name is a Config error.
 */
export function channelTrustTier(name: string): Exclude<TrustTier, 'Kernel'> {
  if (name === 'Kernel') {
    throw new AivyxError('CapabilityDenied', 'a channel cannot claim the Kernel trust tier', {
      hint: 'give the channel Trusted, SemiTrusted or Untrusted',
    });
  }
  if (name === 'Untrusted' || name === 'SemiTrusted' || name === 'Trusted') return name;
  throw new AivyxError('Config', `unknown trust tier "${name}"`, { hint: 'use one of Trusted, SemiTrusted, Untrusted (exact spelling)' });
}
