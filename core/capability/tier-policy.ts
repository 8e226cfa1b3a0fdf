/**
 * The operator's tier policy: which qualifiers satisfy the SemiTrusted ▲ ("qualified only")
 * ceiling entries. Plain data (workflow-safe), read from the environment by infra/tier-policy.ts.
 *
 * A ▲ entry is satisfied ONLY by qualifiers listed here; a ▲ base with none is simply absent from
 * the ceiling. A qualifier that means "everything" (`/**`, `*`) is refused, so a ▲ entry never
 * becomes the whole base again.
 */
import { AivyxError } from '../errors.js';
import { ANY_QUALIFIER } from './qualifier.js';
import { Scope, qualifierKindOf } from './scope.js';

/** The SemiTrusted ▲ bases an operator configures (audit.read's ▲ is fixed: the turn's own session). */
export const SEMITRUSTED_POLICY_BASES = Object.freeze([
  'fs.read',
  'fs.write',
  'git.read',
  'net.post',
  'memory.forget',
  'channel.send',
  'channel.receive',
  // Decided (issue 12): what SemiTrusted may create, e.g. `notify` (reminders: waits and notices only).
  'mission.create',
  // Decided (issue 12): `own` lets a SemiTrusted person list / cancel the missions that name them.
  'mission.list',
  'mission.cancel',
] as const);

/** One of {@link SEMITRUSTED_POLICY_BASES}. */
export type SemiTrustedPolicyBase = (typeof SEMITRUSTED_POLICY_BASES)[number];

/** Per ▲ base, the qualifiers a SemiTrusted turn may hold (canonical after {@link validateTierPolicy}). */
export interface TierPolicy {
  readonly semiTrusted: Readonly<Partial<Record<SemiTrustedPolicyBase, readonly string[]>>>;
}

/** The policy that configures nothing: every configurable ▲ base is absent from the SemiTrusted ceiling. */
export const EMPTY_TIER_POLICY: TierPolicy = Object.freeze({ semiTrusted: Object.freeze({}) });

/**
 * Checks and canonicalizes a policy: every base is configurable, every qualifier parses for its
 * base and none is the base's "anything" form. Throws AivyxError('InvalidScope') naming the base.
 */
export function validateTierPolicy(policy: TierPolicy): TierPolicy {
  const out: Partial<Record<SemiTrustedPolicyBase, readonly string[]>> = {};
  for (const [base, qualifiers] of Object.entries(policy.semiTrusted)) {
    if (!(SEMITRUSTED_POLICY_BASES as readonly string[]).includes(base)) {
      throw new AivyxError('InvalidScope', `tier policy: ${base} is not a SemiTrusted ▲ base`, {
        hint: `configurable bases: ${SEMITRUSTED_POLICY_BASES.join(', ')}`,
      });
    }
    const any = ANY_QUALIFIER[qualifierKindOf(base)];
    const canonical = (qualifiers ?? []).map((q) => {
      const scope = Scope.parse(`${base}:${q}`);
      if (scope.qualifier === any) {
        throw new AivyxError('InvalidScope', `tier policy: ${base}:${q} would grant SemiTrusted all of ${base}`, {
          hint: 'name the folders, URLs or names SemiTrusted channels may reach; a ▲ entry never means everything',
        });
      }
      return scope.qualifier as string;
    });
    out[base as SemiTrustedPolicyBase] = Object.freeze([...new Set(canonical)]);
  }
  return Object.freeze({ semiTrusted: Object.freeze(out) });
}
