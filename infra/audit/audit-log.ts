/**
 * The audit log (seed D4/D7, docs/AUDIT.md): an HMAC chain mac_n = HMAC(auditKey, mac_{n-1} ‖ body_n)
 * and an RFC 6962 Merkle tree over the same bodies, both extended under the `audit_head` row lock
 * (appender.ts), verified in one pass (verify.ts), and held to signed checkpoints (checkpoint.ts).
 * This file holds the reads and the chain-only view of verification.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AuditEvent } from '../../core/audit-events.js';
import type { Database } from '../db/database.js';
import { checkAuditLog } from './verify.js';

// The append and the entry bytes live beside this file; `./index.ts` re-exports them from here.
export { appendAuditEntry, type AppendAuditInput, type AppendAuditResult } from './appender.js';
export { auditBody, auditMac, GENESIS_MAC } from './entry.js';

/** A database handle or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;

/** One audit entry as read back, event parsed. */
export interface AuditRow {
  seq: number;
  idemKey: string;
  turnId: string | null;
  eventType: string;
  event: AuditEvent;
  recordedAt: Date;
  prevMac: string;
  mac: string;
}

/** Result of `verifyAuditChain`. */
export type VerifyAuditResult =
  { ok: true; count: number; headSeq: number } | { ok: false; count: number; firstBadSeq: number; reason: string };

/**
 * Verifies the chain and the tree (no checkpoints) and answers in the chain's terms: the first bad
 * entry and why. `checkAuditLog` is the full report, with checkpoints.
 */
export async function verifyAuditChain(db: Db, auditKey: Uint8Array, opts: { batchSize?: number } = {}): Promise<VerifyAuditResult> {
  const r = await checkAuditLog(db, auditKey, opts);
  if (r.ok) return { ok: true, count: r.count, headSeq: r.headSeq };
  return { ok: false, count: r.count, firstBadSeq: r.firstBadSeq ?? r.count + 1, reason: r.reason ?? 'unknown failure' };
}

/** Maps a stored row to an AuditRow (parses the event). */
function toAuditRow(r: Database['audit_entries']): AuditRow {
  return {
    seq: Number(r.seq),
    idemKey: r.idem_key,
    turnId: r.turn_id,
    eventType: r.event_type,
    event: JSON.parse(r.event) as AuditEvent,
    recordedAt: r.recorded_at,
    prevMac: r.prev_mac,
    mac: r.mac,
  };
}

/** The newest `n` entries, oldest first. */
export async function tailAuditEntries(db: Db, n: number): Promise<AuditRow[]> {
  const rows = await db.selectFrom('audit_entries').selectAll().orderBy('seq', 'desc').limit(n).execute();
  return rows.reverse().map(toAuditRow);
}

/**
 * The newest `n` entries of the turns that started in session `sessionId`, oldest first. A turn
 * belongs to a session by its `TurnStarted` entry (written only after the request's attestation
 * was verified), never by a `TurnRejected` one, whose facts nobody vouched for.
 */
export async function tailAuditEntriesOfSession(db: Db, sessionId: string, n: number): Promise<AuditRow[]> {
  const turns = db
    .selectFrom('audit_entries')
    .select('turn_id')
    .where('event_type', '=', 'TurnStarted')
    .where(sql<string>`(event::jsonb ->> 'sessionId')`, '=', sessionId);
  const rows = await db.selectFrom('audit_entries').selectAll().where('turn_id', 'in', turns).orderBy('seq', 'desc').limit(n).execute();
  return rows.reverse().map(toAuditRow);
}

/** All entries of one turn, in seq order. */
export async function auditEntriesForTurn(db: Db, turnId: string): Promise<AuditRow[]> {
  const rows = await db.selectFrom('audit_entries').selectAll().where('turn_id', '=', turnId).orderBy('seq').execute();
  return rows.map(toAuditRow);
}
