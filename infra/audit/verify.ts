/**
 * `audit verify`: one streaming pass over the entries in seq order that checks, together, the
 * three guarantees of docs/AUDIT.md — the HMAC chain (every link), the Merkle tree (the stored
 * nodes and the head's tree edge against the entries) and the checkpoints it is given (the root
 * at each checkpoint's size, and no checkpoint beyond the log). It stops at the first failure and
 * names the entry, node or checkpoint.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import { auditBody, EntryHasher, GENESIS_MAC, RECORDED_AT_ISO } from './entry.js';
import { Frontier } from './merkle.js';
import { entriesOf, isStoredLevel } from './tree-store.js';

/** A database handle or an open transaction. */
type Db = Kysely<Database> | Transaction<Database>;

/** A (signature-checked) checkpoint to hold the log to, and where it came from, for messages. */
export interface CheckpointClaim {
  size: number;
  root: Buffer;
  /** E.g. `audit-checkpoints #12 (line 45)` or `--checkpoint old.txt`. */
  source: string;
  /** When it was signed (POSIX seconds), if it says. */
  time?: number;
}

/** Which guarantee failed. */
export type AuditGuarantee = 'chain' | 'tree' | 'checkpoint';

/** What `checkAuditLog` found. */
export interface AuditLogReport {
  ok: boolean;
  /** Entries checked (chain link and leaf) before stopping. */
  count: number;
  headSeq: number;
  /** Base64 tree root at `count` entries, when the whole log verified. */
  root: string | null;
  failed?: AuditGuarantee;
  /** The first entry the failure concerns. */
  firstBadSeq?: number;
  reason?: string;
  /** How many checkpoints agreed with the log, and the largest of them. */
  checkpoints: { matched: number; newest: { size: number; source: string } | null };
}

/** Options of `checkAuditLog`. */
export interface VerifyAuditOptions {
  /** Entries per page (default 10,000). */
  batchSize?: number;
  /** Checkpoints the log must agree with. */
  checkpoints?: readonly CheckpointClaim[];
}

/** One page row: what the MAC, the leaf and the column check need. */
interface PageRow {
  seq: number;
  idem_key: string;
  turn_id: string | null;
  event_type: string;
  event: string;
  at: string;
  prev_mac: string;
  mac: string;
}

/** Pages in flight while one is being checked. */
const PAGES_AHEAD = 2;

/** The columns a page row needs. */
const PAGE_COLUMNS = ['seq', 'idem_key', 'turn_id', 'event_type', 'event', RECORDED_AT_ISO.as('at'), 'prev_mac', 'mac'] as const;

/** Entries with from ≤ seq < to, in seq order. */
function range(db: Db, from: number, to: number): Promise<PageRow[]> {
  return db.selectFrom('audit_entries').select(PAGE_COLUMNS).where('seq', '>=', from).where('seq', '<', to).orderBy('seq').execute();
}

/** Entries from `from` on, in seq order. */
function page(db: Db, from: number, limit: number): Promise<PageRow[]> {
  return db.selectFrom('audit_entries').select(PAGE_COLUMNS).where('seq', '>=', from).orderBy('seq').limit(limit).execute();
}

/**
 * Whether the JSON text has `"<key>":"<value>"` with `value` as written (no escapes needed). Searched
 * from the end: canonical JSON sorts keys, and `type`/`turnId` come last in every event.
 */
function hasStringMember(json: string, key: string, value: string): boolean {
  const at = json.lastIndexOf(key);
  if (at < 0) return false;
  const from = at + key.length;
  return json.startsWith(value, from) && json.charCodeAt(from + value.length) === 0x22;
}

/**
 * Whether the denormalized `event_type`/`turn_id` columns (not MACed) agree with the MACed event.
 * Flat canonical JSON (every event today) is checked on the text — in RFC 8785 output an unescaped
 * `"type":"` can only open that key's string value — when the column values need no escaping;
 * anything else is parsed.
 */
function columnsAgree(r: PageRow): boolean {
  const e = r.event;
  if (
    e.indexOf('{', 1) === -1 &&
    !r.event_type.includes('\\') &&
    !r.event_type.includes('"') &&
    !(r.turn_id ?? '').includes('\\') &&
    !(r.turn_id ?? '').includes('"')
  ) {
    if (
      hasStringMember(e, '"type":"', r.event_type) &&
      (r.turn_id === null ? !e.includes('"turnId":"') : hasStringMember(e, '"turnId":"', r.turn_id))
    )
      return true;
  }
  let ev: { type?: unknown; turnId?: unknown };
  try {
    ev = JSON.parse(e) as typeof ev;
  } catch {
    return false;
  }
  return ev.type === r.event_type && (typeof ev.turnId === 'string' ? ev.turnId : null) === r.turn_id;
}

/** The ISO time of a checkpoint, for messages. */
function signedAt(c: CheckpointClaim): string {
  return c.time === undefined ? '' : `, signed ${new Date(c.time * 1000).toISOString()}`;
}

/** Verifies chain, tree and checkpoints in one pass; see the module comment. */
export async function checkAuditLog(db: Db, auditKey: Uint8Array, opts: VerifyAuditOptions = {}): Promise<AuditLogReport> {
  const batchSize = opts.batchSize ?? 10_000;
  const claims = [...(opts.checkpoints ?? [])].sort((a, b) => a.size - b.size);
  const hasher = new EntryHasher(auditKey);
  const frontier = Frontier.empty();
  // Stored-level subtrees as computed from the entries, by level, in index order.
  const computed = new Map<number, Buffer[]>();
  const onNode = (level: number, _index: number, hash: Buffer) => {
    if (!isStoredLevel(level)) return;
    let list = computed.get(level);
    if (!list) computed.set(level, (list = []));
    list.push(hash);
  };
  let prevHex = GENESIS_MAC;
  let headSeq = 0;
  let claimIdx = 0;
  let matched: CheckpointClaim | undefined;
  const report = (failed: AuditGuarantee | undefined, extra: { firstBadSeq?: number; reason?: string } = {}): AuditLogReport => ({
    ok: failed === undefined,
    count: frontier.size,
    headSeq,
    root: failed === undefined ? frontier.root().toString('base64') : null,
    ...(failed ? { failed } : {}),
    ...extra,
    checkpoints: { matched: claimIdx, newest: matched ? { size: matched.size, source: matched.source } : null },
  });
  /** Checks every claim at the current size; a failure message when one disagrees. */
  const checkClaims = (): AuditLogReport | undefined => {
    for (; claimIdx < claims.length && (claims[claimIdx] as CheckpointClaim).size === frontier.size; claimIdx++) {
      const c = claims[claimIdx] as CheckpointClaim;
      if (!frontier.root().equals(c.root)) {
        const from = (matched?.size ?? 0) + 1;
        const range = from === c.size ? `entry ${c.size}` : `entries ${from}–${c.size}`;
        return report('checkpoint', {
          firstBadSeq: from,
          reason: `checkpoint ${c.source} (size ${c.size}${signedAt(c)}) disagrees with ${range}: the log was rewritten after it was signed, or restored from a backup that diverges from it`,
        });
      }
      matched = c;
    }
    return undefined;
  };

  /** Checks one page of rows in order; the failure, if one is found. */
  const checkRows = (rows: readonly PageRow[]): AuditLogReport | undefined => {
    for (const r of rows) {
      const seq = Number(r.seq);
      const expected = frontier.size + 1;
      if (seq !== expected) return report('chain', { firstBadSeq: expected, reason: `entry ${expected} is missing (next is ${seq})` });
      if (r.prev_mac !== prevHex) return report('chain', { firstBadSeq: seq, reason: `entry ${seq} does not link to entry ${seq - 1}` });
      hasher.hash(auditBody(seq, r.idem_key, r.at, r.event));
      if (hasher.macHex !== r.mac)
        return report('chain', { firstBadSeq: seq, reason: `entry ${seq} MAC mismatch (modified, forged or moved)` });
      if (!columnsAgree(r))
        return report('chain', { firstBadSeq: seq, reason: `entry ${seq} event_type/turn_id columns disagree with the MACed event` });
      frontier.append(hasher.leaf, onNode);
      prevHex = r.mac;
      const failure = claims.length > claimIdx ? checkClaims() : undefined;
      if (failure) return failure;
    }
    return undefined;
  };

  let failure = checkClaims();
  if (failure) return failure;
  // Up to the head as it is now, pages are seq ranges fetched a few at a time ahead of the hashing
  // (a gap simply shows up as a missing seq); after that, keyset pages find whatever else exists.
  const startHead = Number((await db.selectFrom('audit_head').select('seq').where('id', '=', 1).executeTakeFirst())?.seq ?? 0);
  const inFlight: Array<Promise<PageRow[]>> = [];
  let nextFrom = 1;
  const fetchAhead = () => {
    while (inFlight.length < PAGES_AHEAD && nextFrom <= startHead) {
      const p = range(db, nextFrom, Math.min(nextFrom + batchSize, startHead + 1));
      // A page left unread after a failure must not become an unhandled rejection.
      p.catch(() => undefined);
      inFlight.push(p);
      nextFrom += batchSize;
    }
  };
  fetchAhead();
  for (let p = inFlight.shift(); p; p = inFlight.shift()) {
    const rows = await p;
    fetchAhead();
    failure = checkRows(rows);
    if (failure) return failure;
  }
  let next = page(db, frontier.size + 1, batchSize);
  for (;;) {
    const rows = await next;
    const last = rows[rows.length - 1];
    // Fetch the next page while this one is hashed.
    if (rows.length === batchSize && last) next = page(db, Number(last.seq) + 1, batchSize);
    failure = checkRows(rows);
    if (failure) return failure;
    if (rows.length === batchSize) continue;
    // Read the head after the rows: appends update both in one transaction, so a head ahead of
    // us means concurrent appends (keep reading); a head behind us means rows past the head.
    const head = await db.selectFrom('audit_head').select(['seq', 'mac', 'frontier']).where('id', '=', 1).executeTakeFirst();
    if (!head) return report('chain', { firstBadSeq: frontier.size + 1, reason: 'audit_head row is missing' });
    headSeq = Number(head.seq);
    const lastSeq = frontier.size;
    if (headSeq > lastSeq) {
      if (rows.length > 0) {
        next = page(db, lastSeq + 1, batchSize);
        continue;
      }
      return report('chain', {
        firstBadSeq: lastSeq + 1,
        reason: `head says ${headSeq} entries but the log ends at ${lastSeq} (tail truncated)`,
      });
    }
    if (headSeq < lastSeq) return report('chain', { firstBadSeq: headSeq + 1, reason: `entries beyond the head (${headSeq}) exist` });
    if (head.mac !== prevHex)
      return report('chain', { firstBadSeq: lastSeq === 0 ? 1 : lastSeq, reason: `head mac disagrees with entry ${lastSeq}` });
    if (!Buffer.from(head.frontier).equals(frontier.encode())) {
      return report('tree', {
        firstBadSeq: lastSeq,
        reason: `audit_head's tree edge disagrees with entries 1–${lastSeq} (checkpoints signed from it would be wrong)`,
      });
    }
    break;
  }
  const treeFailure = await checkStoredNodes(db, computed, frontier.size);
  if (treeFailure) return report('tree', treeFailure);
  const ahead = claims[claims.length - 1];
  if (ahead && ahead.size > frontier.size) {
    const n = frontier.size;
    return report('checkpoint', {
      firstBadSeq: n + 1,
      reason: `checkpoint ${ahead.source} (size ${ahead.size}${signedAt(ahead)}) is ahead of the log, which has ${n} entries: ${n + 1 === ahead.size ? `entry ${ahead.size} was` : `entries ${n + 1}–${ahead.size} were`} removed (the tail was truncated and the head rewound, or the database was restored from an older backup)`,
    });
  }
  return report(undefined);
}

/** Compares `audit_tree_nodes` with the subtrees computed from the entries; a failure, if any. */
async function checkStoredNodes(
  db: Db,
  computed: Map<number, Buffer[]>,
  size: number,
): Promise<{ firstBadSeq: number; reason: string } | undefined> {
  const bad = (level: number, idx: number, what: string) => ({
    firstBadSeq: idx * 2 ** level + 1,
    reason: `tree node for ${entriesOf(level, idx)} ${what}`,
  });
  // Per level, the next index expected: rows come in (level, idx) order, so a skipped index is a missing node.
  const nextIdx = new Map<number, number>();
  let level = 0;
  let idx = -1;
  for (;;) {
    const rows = await db
      .selectFrom('audit_tree_nodes')
      .select(['level', 'idx', 'hash'])
      .where((eb) => eb.or([eb('level', '>', level), eb.and([eb('level', '=', level), eb('idx', '>', idx)])]))
      .orderBy('level')
      .orderBy('idx')
      .limit(10_000)
      .execute();
    for (const r of rows) {
      level = Number(r.level);
      idx = Number(r.idx);
      const want = computed.get(level)?.[idx];
      const expected = nextIdx.get(level) ?? 0;
      if (idx > expected && expected < (computed.get(level)?.length ?? 0)) return bad(level, expected, 'is missing');
      if (!want) {
        // Nodes past the head may be a concurrent append's; only an unmoved head makes them foreign.
        const head = await db.selectFrom('audit_head').select('seq').where('id', '=', 1).executeTakeFirst();
        if (Number(head?.seq) === size) return bad(level, idx, 'exists beyond the head');
        continue;
      }
      if (!want.equals(Buffer.from(r.hash))) return bad(level, idx, 'disagrees with those entries');
      nextIdx.set(level, idx + 1);
    }
    if (rows.length < 10_000) break;
  }
  for (const [lvl, list] of computed) {
    const have = nextIdx.get(lvl) ?? 0;
    if (have < list.length) return bad(lvl, have, 'is missing');
  }
  return undefined;
}
