/** The turn activities' audit port over the PostgreSQL/PGlite audit log. */
import type { Kysely } from 'kysely';
import type { AuditPort } from '../activities/ports.js';
import { appendAuditEntry } from './audit/index.js';
import type { Database } from './db/index.js';

/** An `AuditPort` appending to `audit_entries` under `auditKey`. */
export function createAuditPort(db: Kysely<Database>, auditKey: Uint8Array): AuditPort {
  return {
    async append(idemKey, event) {
      const { seq, duplicate } = await appendAuditEntry(db, auditKey, { idemKey, event });
      return { seq, duplicate };
    },
  };
}
