/**
 * Group commit for the audit log: appends that arrive while a commit is in flight wait for it and
 * then go in together, in one statement that extends the chain, inserts the entries and the new
 * tree nodes, and moves `audit_head` — so each appender pays a share of one durable commit instead
 * of a whole one, and is answered only once its own entry is committed.
 *
 * The appender remembers the head it last wrote. The common case is then a single autocommitted
 * statement whose `update audit_head … where seq = <known> and mac = <known>` takes the head row
 * lock and confirms nobody else moved the head meanwhile. If someone did (another process, a
 * restore), the statement changes nothing and the batch is redone inside a transaction that first
 * locks the head row (`select … for update`), so several processes still serialize on that row.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { auditIdentity, type AuditEvent } from '../../core/audit-events.js';
import { AivyxError } from '../../core/errors.js';
import { canonicalJson } from '../../core/canonical-json.js';
import type { Database } from '../db/database.js';
import { auditBody, auditMac, entryLeafHash } from './entry.js';
import { Frontier } from './merkle.js';
import { isStoredLevel } from './tree-store.js';

/** What to append. `idemKey` makes a retried append a no-op. */
export interface AppendAuditInput {
  idemKey: string;
  event: AuditEvent;
  recordedAt?: Date;
}

/** Result of an append; `duplicate` when the idemKey already held this event. */
export interface AppendAuditResult {
  seq: number;
  mac: string;
  duplicate: boolean;
}

/** What one commit added, for listeners such as the checkpoint writer. */
export interface AuditCommit {
  /** The log's size (= head seq) after the commit. */
  size: number;
  /** Event types in the commit (e.g. `TurnEnded`). */
  eventTypes: ReadonlySet<string>;
}

/** The head as an appender needs it. */
interface Head {
  seq: number;
  mac: string;
  frontier: Frontier;
}

/** One caller waiting for its entry. */
interface Pending {
  idemKey: string;
  event: AuditEvent;
  eventJson: string;
  recordedAt: Date;
  resolve(r: AppendAuditResult): void;
  reject(e: unknown): void;
}

/** A batch planned on top of a head: rows, tree nodes and the head after it. */
interface Plan {
  head: Head;
  results: AppendAuditResult[];
  rows: {
    seq: number[];
    key: string[];
    turn: Array<string | null>;
    type: string[];
    event: string[];
    at: string[];
    prev: string[];
    mac: string[];
  };
  nodes: { level: number[]; idx: number[]; hash: Buffer[] };
}

/** Entries of one batch already in the log (same idemKey), as found by the statement. */
interface ExistingRow {
  idem_key: string;
  seq: number;
  event: string;
  mac: string;
}

/** The outcome of one attempt to commit a batch on a given head. */
type Attempt = { kind: 'committed'; plan: Plan } | { kind: 'stale' } | { kind: 'duplicates'; rows: ExistingRow[] };

/** Most entries per commit (bounds statement size; larger queues simply take several commits). */
const MAX_BATCH = 500;

/** The event's turnId when it has one. */
function turnIdOf(event: AuditEvent): string | null {
  const t = (event as { turnId?: unknown }).turnId;
  return typeof t === 'string' ? t : null;
}

/** The alarm for an idemKey reused with different content. */
function integrityAlarm(idemKey: string, seq: number | undefined): AivyxError {
  return new AivyxError('Audit', `integrity alarm: key ${idemKey} was already used for a different entry`, {
    detail: { idemKey, ...(seq === undefined ? {} : { seq }) },
  });
}

/** Reads the head; `forUpdate` takes its row lock for the rest of the transaction. */
async function readHead(db: Kysely<Database> | Transaction<Database>, forUpdate: boolean): Promise<Head> {
  const q = sql<{
    seq: number;
    mac: string;
    frontier: Uint8Array;
  }>`select seq, mac, frontier from audit_head where id = 1 ${forUpdate ? sql`for update` : sql``}`;
  const h = (await q.execute(db)).rows[0];
  if (!h) throw new AivyxError('Audit', 'audit_head row is missing', { hint: 'the database was tampered with or not migrated' });
  const seq = Number(h.seq);
  return { seq, mac: h.mac, frontier: Frontier.decode(seq, h.frontier) };
}

/** Chains `batch` (unique idemKeys) onto `head`: MACs, leaves, stored tree nodes, next head. */
function plan(auditKey: Uint8Array, head: Head, batch: readonly Pending[]): Plan {
  const frontier = head.frontier.clone();
  const p: Plan = {
    head,
    results: [],
    rows: { seq: [], key: [], turn: [], type: [], event: [], at: [], prev: [], mac: [] },
    nodes: { level: [], idx: [], hash: [] },
  };
  const onNode = (level: number, index: number, hash: Buffer) => {
    if (!isStoredLevel(level)) return;
    p.nodes.level.push(level);
    p.nodes.idx.push(index);
    p.nodes.hash.push(hash);
  };
  let seq = head.seq;
  let prev = head.mac;
  for (const e of batch) {
    seq++;
    const at = e.recordedAt.toISOString();
    const body = auditBody(seq, e.idemKey, at, e.eventJson);
    const mac = auditMac(auditKey, prev, body);
    frontier.append(entryLeafHash(body), onNode);
    p.rows.seq.push(seq);
    p.rows.key.push(e.idemKey);
    p.rows.turn.push(turnIdOf(e.event));
    p.rows.type.push(e.event.type);
    p.rows.event.push(e.eventJson);
    p.rows.at.push(at);
    p.rows.prev.push(prev);
    p.rows.mac.push(mac);
    p.results.push({ seq, mac, duplicate: false });
    prev = mac;
  }
  p.head = { seq, mac: prev, frontier };
  return p;
}

/**
 * One statement: finds entries already holding the batch's keys and, only if there are none and
 * the head is still `head`, moves the head and inserts the entries and tree nodes.
 */
async function attempt(
  db: Kysely<Database> | Transaction<Database>,
  auditKey: Uint8Array,
  head: Head,
  batch: readonly Pending[],
): Promise<Attempt> {
  const p = plan(auditKey, head, batch);
  const { rows, nodes } = p;
  let result;
  try {
    result = await sql<{ updated: number } & { [K in keyof ExistingRow]: ExistingRow[K] | null }>`
      with dup as (
        select idem_key, seq, event, mac from audit_entries where idem_key = any(${rows.key}::text[])
      ), h as (
        update audit_head set seq = ${p.head.seq}, mac = ${p.head.mac}, frontier = ${p.head.frontier.encode()}
        where id = 1 and seq = ${head.seq} and mac = ${head.mac} and not exists (select 1 from dup)
        returning id
      ), ins as (
        insert into audit_entries (seq, idem_key, turn_id, event_type, event, recorded_at, prev_mac, mac)
        select * from unnest(${rows.seq}::bigint[], ${rows.key}::text[], ${rows.turn}::text[], ${rows.type}::text[],
                             ${rows.event}::text[], ${rows.at}::timestamptz[], ${rows.prev}::text[], ${rows.mac}::text[])
        where exists (select 1 from h)
      )${
        // Most commits complete no stored subtree (one in 256 entries does): leave the insert out.
        nodes.level.length === 0
          ? sql``
          : sql`, nodes as (
        insert into audit_tree_nodes (level, idx, hash)
        select * from unnest(${nodes.level}::smallint[], ${nodes.idx}::bigint[], ${nodes.hash}::bytea[])
        where exists (select 1 from h)
      )`
      }
      select (select count(*) from h)::int as updated, d.idem_key, d.seq, d.event, d.mac
      from (select 1) as one left join dup as d on true`.execute(db);
  } catch (e) {
    // A concurrent writer (another process) committed one of our keys after our snapshot.
    if ((e as { code?: string }).code === '23505') return { kind: 'stale' };
    throw e;
  }
  const existing = result.rows.filter((r): r is typeof r & ExistingRow => r.idem_key !== null);
  if (existing.length > 0)
    return { kind: 'duplicates', rows: existing.map((r) => ({ idem_key: r.idem_key, seq: Number(r.seq), event: r.event, mac: r.mac })) };
  return result.rows[0]?.updated === 1 ? { kind: 'committed', plan: p } : { kind: 'stale' };
}

/** Listeners told about every commit of an appender over that database. */
const commitListeners = new WeakMap<Kysely<Database>, Set<(c: AuditCommit) => void>>();

/** Calls `listener` after each group commit of this process on `db`; returns an unsubscribe. */
export function onAuditCommit(db: Kysely<Database>, listener: (c: AuditCommit) => void): () => void {
  let set = commitListeners.get(db);
  if (!set) commitListeners.set(db, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/** True when `stored` (an entry's event JSON) is the entry `p` would write: equal, or equal but for its measured timings. */
function sameEntry(stored: string, p: Pending): boolean {
  if (stored === p.eventJson) return true;
  const identity = canonicalJson(auditIdentity(p.event));
  if (identity === p.eventJson) return false;
  try {
    return canonicalJson(auditIdentity(JSON.parse(stored) as AuditEvent)) === identity;
  } catch {
    return false;
  }
}

/** Splits a batch by idemKey: the first of each key goes in, later ones follow it or are alarms. */
function dedupe(batch: readonly Pending[]): { leaders: Pending[]; followers: Map<Pending, Pending[]> } {
  const byKey = new Map<string, Pending>();
  const followers = new Map<Pending, Pending[]>();
  const leaders: Pending[] = [];
  for (const p of batch) {
    const leader = byKey.get(p.idemKey);
    if (!leader) {
      byKey.set(p.idemKey, p);
      leaders.push(p);
    } else if (sameEntry(leader.eventJson, p)) {
      followers.set(leader, [...(followers.get(leader) ?? []), p]);
    } else {
      p.reject(integrityAlarm(p.idemKey, undefined));
    }
  }
  return { leaders, followers };
}

/** Settles a leader and its followers with the same entry. */
function settle(leader: Pending, followers: Map<Pending, Pending[]>, r: AppendAuditResult): void {
  leader.resolve(r);
  for (const f of followers.get(leader) ?? []) f.resolve({ ...r, duplicate: true });
}

/** Settles the leaders whose keys the log already holds (same event → their seq; else an alarm); returns the rest. */
function settleExisting(leaders: Pending[], followers: Map<Pending, Pending[]>, rows: readonly ExistingRow[]): Pending[] {
  const found = new Map(rows.map((r) => [r.idem_key, r]));
  return leaders.filter((p) => {
    const row = found.get(p.idemKey);
    if (!row) return true;
    if (sameEntry(row.event, p)) settle(p, followers, { seq: row.seq, mac: row.mac, duplicate: true });
    else {
      p.reject(integrityAlarm(p.idemKey, row.seq));
      for (const f of followers.get(p) ?? []) f.reject(integrityAlarm(p.idemKey, row.seq));
    }
    return false;
  });
}

/** The group-commit queue of one (database, audit key). */
class GroupCommitAppender {
  readonly #db: Kysely<Database>;
  readonly #key: Uint8Array;
  #queue: Pending[] = [];
  #draining = false;
  /** The head this appender last committed, if it is still believed current. */
  #head: Head | undefined;

  constructor(db: Kysely<Database>, key: Uint8Array) {
    this.#db = db;
    this.#key = key;
  }

  /** Whether this appender MACs with `key`. */
  hasKey(key: Uint8Array): boolean {
    return Buffer.compare(this.#key, key) === 0;
  }

  /** Queues one entry; resolves once the commit holding it is durable. */
  append(input: AppendAuditInput, eventJson: string): Promise<AppendAuditResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({
        idemKey: input.idemKey,
        event: input.event,
        eventJson,
        recordedAt: input.recordedAt ?? new Date(),
        resolve,
        reject,
      });
      if (!this.#draining) void this.#drain();
    });
  }

  /** Commits queued entries batch after batch until the queue is empty. */
  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        try {
          await this.#commit(batch);
        } catch (e) {
          // Anyone not yet answered learns why (settled promises ignore a second settlement).
          this.#head = undefined;
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Commits one batch: optimistically on the remembered head, else under the head row lock. */
  async #commit(batch: readonly Pending[]): Promise<void> {
    const { leaders, followers } = dedupe(batch);
    let pending = leaders;
    let locked = this.#head === undefined;
    for (let round = 0; pending.length > 0; round++) {
      if (round >= 10)
        throw new AivyxError('Audit', 'could not append to the audit log: the head kept changing', {
          hint: 'is something rewriting audit_head?',
        });
      const batchNow = pending;
      let outcome: Attempt;
      if (locked) {
        outcome = await this.#db.transaction().execute(async (trx) => attempt(trx, this.#key, await readHead(trx, true), batchNow));
      } else {
        outcome = await attempt(this.#db, this.#key, this.#head as Head, batchNow);
      }
      if (outcome.kind === 'stale') {
        this.#head = undefined;
        locked = true;
      } else if (outcome.kind === 'duplicates') {
        pending = settleExisting(pending, followers, outcome.rows);
      } else {
        this.#head = outcome.plan.head;
        batchNow.forEach((p, i) => settle(p, followers, outcome.plan.results[i] as AppendAuditResult));
        const types = new Set(batchNow.map((p) => p.event.type));
        for (const l of commitListeners.get(this.#db) ?? []) l({ size: outcome.plan.head.seq, eventTypes: types });
        return;
      }
    }
  }
}

const appenders = new WeakMap<Kysely<Database>, GroupCommitAppender[]>();

/** The process-wide group-commit appender for (db, key), created on first use. */
function appenderFor(db: Kysely<Database>, key: Uint8Array): GroupCommitAppender {
  let list = appenders.get(db);
  if (!list) appenders.set(db, (list = []));
  let a = list.find((x) => x.hasKey(key));
  if (!a) list.push((a = new GroupCommitAppender(db, key)));
  return a;
}

/**
 * Appends one event; idempotent on `idemKey` (same key and event → the original seq with
 * `duplicate: true`; same key, other event → an Audit integrity alarm). On a database handle it
 * joins this process's group commit; inside a transaction it appends there, under the head lock,
 * and is durable when that transaction commits.
 */
export async function appendAuditEntry(
  db: Kysely<Database> | Transaction<Database>,
  auditKey: Uint8Array,
  input: AppendAuditInput,
): Promise<AppendAuditResult> {
  const eventJson = canonicalJson(input.event);
  if (!db.isTransaction) return appenderFor(db as Kysely<Database>, auditKey).append(input, eventJson);
  const trx = db as Transaction<Database>;
  let result: AppendAuditResult | undefined;
  let failure: unknown;
  const one: Pending = {
    idemKey: input.idemKey,
    event: input.event,
    eventJson,
    recordedAt: input.recordedAt ?? new Date(),
    resolve: (r) => (result = r),
    reject: (e) => (failure = e),
  };
  const outcome = await attempt(trx, auditKey, await readHead(trx, true), [one]);
  if (outcome.kind === 'duplicates') settleExisting([one], new Map(), outcome.rows);
  else if (outcome.kind === 'committed') result = outcome.plan.results[0];
  else throw new AivyxError('Audit', `could not append ${input.idemKey}: the head changed under its row lock`);
  if (failure !== undefined) throw failure;
  return result as AppendAuditResult;
}
