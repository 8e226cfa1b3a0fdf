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
