/**
 * The HMAC-chained audit log (seed D4/D7): mac_n = HMAC(auditKey, mac_{n-1} ‖ body_n), with the
 * chain head row in `audit_head` whose row lock serializes appends across processes.
 */
import { createHmac } from 'node:crypto';
import { hexToBytes } from '@noble/hashes/utils.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AuditEvent } from '../../core/audit-events.js';
import { AivyxError } from '../../core/errors.js';
import { canonicalJson, timingSafeEqualHex } from '../crypto/canonical-json.js';
import type { Database } from '../db/database.js';

/** A database handle or an open transaction. */
export type Db = Kysely<Database> | Transaction<Database>;

/** The mac that precedes seq 1. */
export const GENESIS_MAC = '0'.repeat(64);

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

/** What to append. `idemKey` makes a retried append a no-op. */
export interface AppendAuditInput {
  idemKey: string;
  event: AuditEvent;
  recordedAt?: Date;
}

/** Result of `appendAuditEntry`; `duplicate` when the idemKey already held this event. */
export interface AppendAuditResult {
  seq: number;
  mac: string;
  duplicate: boolean;
}

/** Result of `verifyAuditChain`. */
export type VerifyAuditResult =
  | { ok: true; count: number; headSeq: number }
  | { ok: false; count: number; firstBadSeq: number; reason: string };

/**
 * The MACed body: equal to canonicalJson({ seq, idemKey, recordedAt, event }) given that
 * `eventJson` is canonical. Written by hand (keys already in RFC 8785 order: event < idemKey <
 * recordedAt < seq) so verify never re-parses and re-canonicalizes each event.
 */
export function auditBody(seq: number, idemKey: string, recordedAtIso: string, eventJson: string): string {
  return `{"event":${eventJson},"idemKey":${JSON.stringify(idemKey)},"recordedAt":${JSON.stringify(recordedAtIso)},"seq":${seq}}`;
}

/**
 * Hex HMAC-SHA256(key, prevMac bytes ‖ utf8(body)). Node's (OpenSSL) HMAC here, not the pure-JS
 * one: it is the cost of every append and of `audit verify`, and several times faster.
 */
export function auditMac(auditKey: Uint8Array, prevMac: string, body: string): string {
  return createHmac('sha256', auditKey).update(hexToBytes(prevMac)).update(body, 'utf8').digest('hex');
}

/** The event's turnId when it has one. */
function turnIdOf(event: AuditEvent): string | null {
  const t = (event as { turnId?: unknown }).turnId;
  return typeof t === 'string' ? t : null;
}

/** Appends one event under the head lock; idempotent on `idemKey`. */
export async function appendAuditEntry(db: Db, auditKey: Uint8Array, input: AppendAuditInput): Promise<AppendAuditResult> {
  const eventJson = canonicalJson(input.event);
  // A concurrent appender with the same idemKey can slip past the in-lock check (its join
  // row comes from the pre-lock snapshot); the unique index catches it, and one retry sees it.
  for (let attempt = 0; ; attempt++) {
    try {
      return await appendOnce(db, auditKey, input, eventJson);
    } catch (e) {
      if (attempt === 0 && (e as { code?: string }).code === '23505') continue;
      throw e;
    }
  }
}

/** One attempt: two statements inside one transaction (lock+dup check, insert+head update). */
async function appendOnce(db: Db, auditKey: Uint8Array, input: AppendAuditInput, eventJson: string): Promise<AppendAuditResult> {
  const run = async (trx: Transaction<Database>): Promise<AppendAuditResult> => {
    const head = await sql<{ seq: number; mac: string; dup_seq: number | null; dup_event: string | null; dup_mac: string | null }>`
      select h.seq, h.mac, e.seq as dup_seq, e.event as dup_event, e.mac as dup_mac
      from audit_head h left join audit_entries e on e.idem_key = ${input.idemKey}
      where h.id = 1 for update of h`.execute(trx);
    const h = head.rows[0];
    if (!h) throw new AivyxError('Audit', 'audit_head row is missing', { hint: 'the database was tampered with or not migrated' });
    if (h.dup_seq !== null) {
      if (h.dup_event === eventJson) return { seq: Number(h.dup_seq), mac: h.dup_mac ?? '', duplicate: true };
      throw new AivyxError('Audit', `integrity alarm: key ${input.idemKey} was already used for a different entry`, {
        detail: { idemKey: input.idemKey, seq: Number(h.dup_seq) },
      });
    }
    const seq = Number(h.seq) + 1;
    const recordedAt = input.recordedAt ?? new Date();
    const mac = auditMac(auditKey, h.mac, auditBody(seq, input.idemKey, recordedAt.toISOString(), eventJson));
    await sql`
      with ins as (
        insert into audit_entries (seq, idem_key, turn_id, event_type, event, recorded_at, prev_mac, mac)
        values (${seq}, ${input.idemKey}, ${turnIdOf(input.event)}, ${input.event.type}, ${eventJson}, ${recordedAt}, ${h.mac}, ${mac})
        returning seq)
      update audit_head set seq = (select seq from ins), mac = ${mac} where id = 1`.execute(trx);
    return { seq, mac, duplicate: false };
  };
  if (db.isTransaction) return run(db as Transaction<Database>);
  return (db as Kysely<Database>).transaction().execute(run);
}

/** Verifies the whole chain in seq order, in keyset-paginated batches, against the head row. */
export async function verifyAuditChain(db: Db, auditKey: Uint8Array, opts: { batchSize?: number } = {}): Promise<VerifyAuditResult> {
  const batchSize = opts.batchSize ?? 2000;
  let prevMac = GENESIS_MAC;
  let expected = 1;
  let count = 0;
  const bad = (firstBadSeq: number, reason: string): VerifyAuditResult => ({ ok: false, count, firstBadSeq, reason });
  for (;;) {
    const rows = await db
      .selectFrom('audit_entries')
      .select(['seq', 'idem_key', 'turn_id', 'event_type', 'event', 'recorded_at', 'prev_mac', 'mac'])
      .where('seq', '>=', expected)
      .orderBy('seq')
      .limit(batchSize)
      .execute();
    for (const r of rows) {
      const seq = Number(r.seq);
      if (seq !== expected) return bad(expected, `entry ${expected} is missing (next is ${seq})`);
      if (r.prev_mac !== prevMac) return bad(seq, `entry ${seq} does not link to entry ${seq - 1}`);
      const mac = auditMac(auditKey, prevMac, auditBody(seq, r.idem_key, r.recorded_at.toISOString(), r.event));
      if (!timingSafeEqualHex(mac, r.mac)) return bad(seq, `entry ${seq} MAC mismatch (modified, forged or moved)`);
      // Denormalized columns are not MACed: they must agree with the MACed event.
      let ev: { type?: unknown; turnId?: unknown };
      try {
        ev = JSON.parse(r.event) as typeof ev;
      } catch {
        return bad(seq, `entry ${seq} event is not JSON`);
      }
      if (ev.type !== r.event_type || (typeof ev.turnId === 'string' ? ev.turnId : null) !== r.turn_id) {
        return bad(seq, `entry ${seq} event_type/turn_id columns disagree with the MACed event`);
      }
      prevMac = r.mac;
      expected = seq + 1;
      count++;
    }
    if (rows.length === batchSize) continue;
    // Read the head after the rows: appends update both in one transaction, so a head ahead of
    // us means concurrent appends (keep reading); a head behind us means rows past the head.
    const head = await db.selectFrom('audit_head').select(['seq', 'mac']).where('id', '=', 1).executeTakeFirst();
    if (!head) return bad(expected, 'audit_head row is missing');
    const headSeq = Number(head.seq);
    const lastSeq = expected - 1;
    if (headSeq > lastSeq) {
      if (rows.length > 0) continue;
      return bad(expected, `head says ${headSeq} entries but the log ends at ${lastSeq} (tail truncated)`);
    }
    if (headSeq < lastSeq) return bad(headSeq + 1, `entries beyond the head (${headSeq}) exist`);
    if (head.mac !== prevMac) return bad(lastSeq === 0 ? 1 : lastSeq, `head mac disagrees with entry ${lastSeq}`);
    return { ok: true, count, headSeq };
  }
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
  const turns = db.selectFrom('audit_entries').select('turn_id').where('event_type', '=', 'TurnStarted').where(sql<string>`(event::jsonb ->> 'sessionId')`, '=', sessionId);
  const rows = await db.selectFrom('audit_entries').selectAll().where('turn_id', 'in', turns).orderBy('seq', 'desc').limit(n).execute();
  return rows.reverse().map(toAuditRow);
}

/** All entries of one turn, in seq order. */
export async function auditEntriesForTurn(db: Db, turnId: string): Promise<AuditRow[]> {
  const rows = await db.selectFrom('audit_entries').selectAll().where('turn_id', '=', turnId).orderBy('seq').execute();
  return rows.map(toAuditRow);
}
