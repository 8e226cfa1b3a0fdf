/** The HMAC-chained audit log: append, verify, read. */
export {
  appendAuditEntry,
  verifyAuditChain,
  tailAuditEntries,
  tailAuditEntriesOfSession,
  auditEntriesForTurn,
  auditBody,
  auditMac,
  GENESIS_MAC,
  type Db,
  type AuditRow,
  type AppendAuditInput,
  type AppendAuditResult,
  type VerifyAuditResult,
} from './audit-log.js';
/** Group commit, Merkle proofs, signed checkpoints and the witness file (docs/AUDIT.md). */
export { onAuditCommit, type AuditCommit } from './appender.js';
export { entryLeafHash } from './entry.js';
export { checkAuditLog, type AuditLogReport, type AuditGuarantee, type CheckpointClaim, type VerifyAuditOptions } from './verify.js';
export { StoredTree } from './tree-store.js';
export {
  CheckpointSigner,
  checkpointVerifier,
  openCheckpoint,
  parseVerifierKey,
  splitNotes,
  type Checkpoint,
  type CheckpointVerifier,
} from './checkpoint.js';
export {
  createAuditService,
  type AuditService,
  type AuditServiceOptions,
  type WitnessedAuditReport,
  type InclusionProofReport,
  type ConsistencyProofReport,
  type AuditPublicKey,
} from './audit-service.js';
export { startAuditCheckpoints, type AuditCheckpoints, type AuditCheckpointsOptions } from './checkpointer.js';
export { appendWitness, readWitness, witnessPath, WITNESS_FILE } from './witness.js';
export { Frontier, leafHash, nodeHash, EMPTY_ROOT } from './merkle.js';
export { startAuditDigest, parseAuditDigestTarget, auditDigestText, type AuditDigestTarget, type AuditDigestOptions } from './digest.js';
