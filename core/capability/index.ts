/** The capability model (seed Deliverables 4 and 5): scopes, sets, tiers. Pure and workflow-safe. */
export { Scope, KNOWN_SCOPE_BASES, RESERVED_SCOPE_BASES, isKnownScopeBase, qualifierKindOf } from './scope.js';
export { ANY_QUALIFIER, type QualifierKind } from './qualifier.js';
export { CapabilitySet } from './capability-set.js';
export {
  type TrustTier,
  TRUST_TIERS,
  TIER_EXTRA_AUDIT,
  isMoreTrustedThan,
  isTrustTier,
  tierCeiling,
  effectiveCapabilities,
  channelTrustTier,
} from './trust-tier.js';
export { normalizePosixPath, tryNormalizePosixPath } from '../path.js';
