/**
 * Builds a large, valid audit log (chain, tree nodes, head) directly in the database, far faster
 * than appending entry by entry: for tests and benchmarks that need 100k or 1M entries.
 */
import { sql, type Kysely } from 'kysely';
import type { AuditEvent } from '../../core/audit-events.js';
import { canonicalJson } from '../../infra/crypto/index.js';
import type { Database } from '../../infra/db/index.js';
import { auditBody, auditMac, entryLeafHash, GENESIS_MAC } from '../../infra/audit/index.js';
import { Frontier } from '../../infra/audit/merkle.js';
import { isStoredLevel } from '../../infra/audit/tree-store.js';

/** The event of entry `seq` unless the caller says otherwise. */
function defaultEvent(seq: number): AuditEvent {
  return {
    type: 'ToolCall',
    turnId: `t${Math.floor(seq / 5)}`,
    callId: `c${seq}`,
    toolId: 'fs.read',
    scopeUsed: 'fs.read',
    inputHash: 'ab'.repeat(32),
    outcome: 'Ok',
    durationMs: seq % 97,
  };
}

/** Appends `n` entries to the (possibly non-empty) log at `db`, in chunks, and returns the new size. */
export async function bulkAuditLog(
  db: Kysely<Database>,
  key: Uint8Array,
  n: number,
  opts: { event?: (seq: number) => AuditEvent; chunk?: number } = {},
): Promise<number> {
  const chunk = opts.chunk ?? 5000;
  const event = opts.event ?? defaultEvent;
  const head = await db.selectFrom('audit_head').select(['seq', 'mac', 'frontier']).where('id', '=', 1).executeTakeFirstOrThrow();
  let seq = Number(head.seq);
  let prev = head.mac || GENESIS_MAC;
  const frontier = Frontier.decode(seq, head.frontier);
  const at = new Date('2026-12-03T00:00:00.000Z');
  const end = seq + n;
  while (seq < end) {
    const rows = {
      seq: [] as number[],
      key: [] as string[],
      turn: [] as string[],
      type: [] as string[],
      event: [] as string[],
      at: [] as string[],
      prev: [] as string[],
      mac: [] as string[],
    };
    const nodes = { level: [] as number[], idx: [] as number[], hash: [] as Buffer[] };
    for (let i = 0; i < chunk && seq < end; i++) {
      seq++;
      const ev = event(seq);
      const json = canonicalJson(ev);
      const iso = new Date(at.getTime() + seq).toISOString();
      const body = auditBody(seq, `bulk/${seq}`, iso, json);
      const mac = auditMac(key, prev, body);
      frontier.append(entryLeafHash(body), (level, idx, hash) => {
        if (!isStoredLevel(level)) return;
        nodes.level.push(level);
        nodes.idx.push(idx);
        nodes.hash.push(hash);
      });
      rows.seq.push(seq);
      rows.key.push(`bulk/${seq}`);
      rows.turn.push(ev.turnId);
      rows.type.push(ev.type);
      rows.event.push(json);
      rows.at.push(iso);
      rows.prev.push(prev);
      rows.mac.push(mac);
      prev = mac;
    }
    await db.transaction().execute(async (trx) => {
      await sql`insert into audit_entries (seq, idem_key, turn_id, event_type, event, recorded_at, prev_mac, mac)
        select * from unnest(${rows.seq}::bigint[], ${rows.key}::text[], ${rows.turn}::text[], ${rows.type}::text[],
                             ${rows.event}::text[], ${rows.at}::timestamptz[], ${rows.prev}::text[], ${rows.mac}::text[])`.execute(trx);
      if (nodes.level.length > 0) {
        await sql`insert into audit_tree_nodes (level, idx, hash) select * from unnest(${nodes.level}::smallint[], ${nodes.idx}::bigint[], ${nodes.hash}::bytea[])`.execute(
          trx,
        );
      }
      await trx.updateTable('audit_head').set({ seq, mac: prev, frontier: frontier.encode() }).where('id', '=', 1).execute();
    });
  }
  return seq;
}
