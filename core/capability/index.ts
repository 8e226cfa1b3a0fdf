/** The capability model (seed Deliverables 4 and 5): scopes, sets, tiers. Pure and workflow-safe. */
export { Scope, KNOWN_SCOPE_BASES, RESERVED_SCOPE_BASES, DATA_DIR_SCOPE_BASE, isKnownScopeBase, qualifierKindOf } from './scope.js';
export { ANY_QUALIFIER, type QualifierKind } from './qualifier.js';
export { CapabilitySet } from './capability-set.js';
export {
  type TrustTier,
  TRUST_TIERS,
  TIER_EXTRA_AUDIT,
  KERNEL_ONLY_BASES,
  AUDIT_READ_OWN_SESSION,
  isMoreTrustedThan,
  isTrustTier,
  tierCeiling,
  effectiveCapabilities,
  channelTrustTier,
} from './trust-tier.js';
export {
  type TierPolicy,
  type SemiTrustedPolicyBase,
  SEMITRUSTED_POLICY_BASES,
  EMPTY_TIER_POLICY,
  validateTierPolicy,
} from './tier-policy.js';
export { normalizePosixPath, tryNormalizePosixPath } from '../path.js';
