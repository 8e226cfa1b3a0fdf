/** The audit log: group-commit appends, verify, reads, Merkle proofs and signed checkpoints. */
export { appendAuditEntry, onAuditCommit, type AppendAuditInput, type AppendAuditResult, type AuditCommit } from './appender.js';
export { verifyAuditChain, tailAuditEntries, auditEntriesForTurn, type Db, type AuditRow, type VerifyAuditResult } from './audit-log.js';
export { auditBody, auditMac, entryLeafHash, GENESIS_MAC } from './entry.js';
export { verifyAuditLog, type AuditLogReport, type AuditGuarantee, type CheckpointClaim, type VerifyAuditOptions } from './verify.js';
export { StoredTree } from './tree-store.js';
export { CheckpointSigner, checkpointVerifier, openCheckpoint, parseVerifierKey, splitNotes, type Checkpoint, type CheckpointVerifier } from './checkpoint.js';
export { createAuditService, type AuditService, type AuditServiceOptions, type AuditVerifyReport, type InclusionProofReport, type ConsistencyProofReport, type AuditPublicKey } from './audit-service.js';
export { startAuditCheckpoints, type AuditCheckpoints, type AuditCheckpointsOptions } from './checkpointer.js';
export { appendWitness, readWitness, witnessPath, WITNESS_FILE } from './witness.js';
export { Frontier, leafHash, nodeHash, EMPTY_ROOT } from './merkle.js';
export { startAuditDigest, parseAuditDigestTarget, auditDigestText, type AuditDigestTarget, type AuditDigestOptions } from './digest.js';
