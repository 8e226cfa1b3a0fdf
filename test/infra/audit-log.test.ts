import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../core/audit-events.js';
import { appendAuditEntry, auditBody, auditEntriesForTurn, tailAuditEntries, verifyAuditChain } from '../../infra/audit/index.js';
import { canonicalJson } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { bulkAuditLog } from '../support/audit-bulk.js';
import { openStorageBackends } from '../support/postgres.js';

const key = new Uint8Array(32).fill(7);

function ended(turnId: string, n = 0, durationMs = 5): AuditEvent {
  return { type: 'TurnEnded', turnId, outcome: 'Completed', toolCallsMade: n, durationMs };
}

async function fill(s: OpenDatabase, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) await appendAuditEntry(s.db, key, { idemKey: `k${i}`, event: ended(`t${i % 3}`, i) });
}

describe.each(openStorageBackends())('audit log on $name', (backend) => {
  let s: OpenDatabase;
  beforeAll(async () => {
    s = await backend.open();
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await sql`delete from audit_entries`.execute(s.db);
    await sql`delete from audit_tree_nodes`.execute(s.db);
    await sql`update audit_head set seq = 0, mac = ${'0'.repeat(64)}, frontier = ''::bytea where id = 1`.execute(s.db);
  });

  it('body is the canonical JSON of { seq, idemKey, recordedAt, event }', () => {
    const ev = ended('t"1');
    const iso = new Date(0).toISOString();
    expect(auditBody(3, 'k"é', iso, canonicalJson(ev))).toBe(canonicalJson({ seq: 3, idemKey: 'k"é', recordedAt: iso, event: ev }));
  });

  it('appends and verifies; empty chain verifies', async () => {
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 0, headSeq: 0 });
    await fill(s, 10);
    expect(await verifyAuditChain(s.db, key, { batchSize: 3 })).toEqual({ ok: true, count: 10, headSeq: 10 });
    const tail = await tailAuditEntries(s.db, 3);
    expect(tail.map((r) => r.seq)).toEqual([8, 9, 10]);
    expect(tail[2]!.event).toEqual(ended('t1', 10));
    expect((await auditEntriesForTurn(s.db, 't1')).map((r) => r.seq)).toEqual([1, 4, 7, 10]);
    expect(await verifyAuditChain(s.db, new Uint8Array(32))).toMatchObject({ ok: false, firstBadSeq: 1 });
  });

  it('re-append with the same key returns the original seq; different content alarms', async () => {
    const a = await appendAuditEntry(s.db, key, { idemKey: 'x', event: ended('t') });
    await appendAuditEntry(s.db, key, { idemKey: 'y', event: ended('t') });
    const again = await appendAuditEntry(s.db, key, { idemKey: 'x', event: ended('t') });
    expect(again).toEqual({ seq: a.seq, mac: a.mac, duplicate: true });
    await expect(appendAuditEntry(s.db, key, { idemKey: 'x', event: ended('t', 1) })).rejects.toMatchObject({
      kind: 'Audit',
      message: 'integrity alarm: key x was already used for a different entry',
    });
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 2, headSeq: 2 });
  });

  it('a local activity run again measures again: a different measured timing is the same entry; anything else still alarms', async () => {
    const first = await appendAuditEntry(s.db, key, { idemKey: 'la', event: ended('t', 0, 120) });
    // The rerun after a crash or an eviction measured 180 ms: the first entry stands.
    expect(await appendAuditEntry(s.db, key, { idemKey: 'la', event: ended('t', 0, 180) })).toEqual({
      seq: first.seq,
      mac: first.mac,
      duplicate: true,
    });
    for (const other of [
      { ...(ended('t', 0, 120) as Extract<AuditEvent, { type: 'TurnEnded' }>), outcome: 'TimedOut' },
      ended('t', 3, 120),
      ended('other', 0, 120),
    ])
      await expect(appendAuditEntry(s.db, key, { idemKey: 'la', event: other })).rejects.toMatchObject({ kind: 'Audit' });
    // A tool call's duration is not measured by a workflow: it stays part of the entry.
    const call = {
      type: 'ToolCall',
      turnId: 't',
      callId: 'c',
      toolId: 'fs.read',
      scopeUsed: 'fs.read:/x',
      inputHash: 'h',
      outcome: 'Completed',
      durationMs: 3,
    } as const;
    await appendAuditEntry(s.db, key, { idemKey: 'call', event: call });
    await expect(appendAuditEntry(s.db, key, { idemKey: 'call', event: { ...call, durationMs: 4 } })).rejects.toMatchObject({
      kind: 'Audit',
    });
    expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: true, count: 2 });
  });

  it('concurrent appenders (group commit) get each entry acknowledged once, in one gapless valid chain', async () => {
    const per = backend.name === 'postgres' ? 100 : 40;
    const appenders = 12;
    const results = await Promise.all(
      Array.from({ length: appenders }, async (_, w) => {
        const mine: number[] = [];
        for (let i = 0; i < per; i++)
          mine.push((await appendAuditEntry(s.db, key, { idemKey: `w${w}-${i}`, event: ended(`w${w}`, i) })).seq);
        return mine;
      }),
    );
    const all = results.flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: appenders * per }, (_, i) => i + 1));
    // Each appender's own entries are in its own order, and each seq holds that appender's entry.
    for (const [w, mine] of results.entries()) {
      expect([...mine].sort((a, b) => a - b)).toEqual(mine);
      const rows = await s.db.selectFrom('audit_entries').select(['seq', 'idem_key']).where('seq', 'in', mine).orderBy('seq').execute();
      expect(rows.map((r) => r.idem_key)).toEqual(mine.map((_, i) => `w${w}-${i}`));
    }
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: appenders * per, headSeq: appenders * per });

    // Retries of those appends, concurrent with new ones and with each other, get the original seqs back.
    const retried = await Promise.all([
      ...Array.from({ length: appenders }, (_, w) => appendAuditEntry(s.db, key, { idemKey: `w${w}-0`, event: ended(`w${w}`, 0) })),
      ...Array.from({ length: appenders }, (_, w) => appendAuditEntry(s.db, key, { idemKey: `w${w}-0`, event: ended(`w${w}`, 0) })),
      ...Array.from({ length: 4 }, (_, i) => appendAuditEntry(s.db, key, { idemKey: `late-${i}`, event: ended('late', i) })),
    ]);
    for (let w = 0; w < appenders; w++) {
      expect(retried[w]).toMatchObject({ seq: results[w]![0], duplicate: true });
      expect(retried[appenders + w]).toMatchObject({ seq: results[w]![0], duplicate: true });
    }
    expect(
      retried
        .slice(2 * appenders)
        .map((r) => r.seq)
        .sort((a, b) => a - b),
    ).toEqual([1, 2, 3, 4].map((i) => appenders * per + i));
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: appenders * per + 4, headSeq: appenders * per + 4 });
  });

  it('the same key twice in one group commit: one entry; a different event under it alarms', async () => {
    const [a, b, c] = await Promise.allSettled([
      appendAuditEntry(s.db, key, { idemKey: 'same', event: ended('t') }),
      appendAuditEntry(s.db, key, { idemKey: 'same', event: ended('t') }),
      appendAuditEntry(s.db, key, { idemKey: 'same', event: ended('t', 9) }),
    ]);
    expect(a).toMatchObject({ status: 'fulfilled', value: { seq: 1, duplicate: false } });
    expect(b).toMatchObject({ status: 'fulfilled', value: { seq: 1, duplicate: true } });
    expect(c).toMatchObject({
      status: 'rejected',
      reason: { kind: 'Audit', message: 'integrity alarm: key same was already used for a different entry' },
    });
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 1, headSeq: 1 });
  });

  it('appends made by another process (head moved behind this one) are chained onto, not overwritten', async () => {
    await fill(s, 3);
    // Another writer (same key, own head) appends two entries directly inside a transaction.
    await s.db.transaction().execute(async (trx) => {
      await appendAuditEntry(trx, key, { idemKey: 'other-1', event: ended('o', 1) });
      await appendAuditEntry(trx, key, { idemKey: 'other-2', event: ended('o', 2) });
    });
    expect(await appendAuditEntry(s.db, key, { idemKey: 'mine', event: ended('m') })).toMatchObject({ seq: 6, duplicate: false });
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 6, headSeq: 6 });
  });

  describe('tamper detection', () => {
    beforeEach(async () => {
      await fill(s, 10);
    });

    it('modified event fails at that seq', async () => {
      await sql`update audit_entries set event = replace(event, '"toolCallsMade":5', '"toolCallsMade":6') where seq = 5`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 5, count: 4 });
    });

    it('deleted row fails at its seq', async () => {
      await sql`delete from audit_entries where seq = 4`.execute(s.db);
      expect(await verifyAuditChain(s.db, key, { batchSize: 2 })).toMatchObject({ ok: false, firstBadSeq: 4 });
    });

    it('forged row fails at its seq', async () => {
      await sql`update audit_head set seq = 11 where id = 1`.execute(s.db);
      await sql`insert into audit_entries (seq, idem_key, turn_id, event_type, event, recorded_at, prev_mac, mac)
        select 11, 'forged', turn_id, event_type, event, recorded_at, mac, repeat('ab', 32) from audit_entries where seq = 10`.execute(
        s.db,
      );
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 11, count: 10 });
    });

    it('swapped rows fail at the first of them', async () => {
      await sql`update audit_entries a set idem_key = b.idem_key || '!', event = b.event, mac = b.mac
        from audit_entries b where (a.seq, b.seq) in ((3, 7), (7, 3))`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 3 });
    });

    it('denormalized columns that disagree with the MACed event fail at that seq', async () => {
      await sql`update audit_entries set turn_id = 't9' where seq = 4`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({
        ok: false,
        firstBadSeq: 4,
        reason: 'entry 4 event_type/turn_id columns disagree with the MACed event',
      });
      await sql`update audit_entries set turn_id = null where seq = 4`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 4 });
      await sql`update audit_entries set turn_id = 't1' where seq = 4`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: true });
      await sql`update audit_entries set event_type = 'TurnStarted' where seq = 6`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 6 });
      await sql`update audit_entries set event_type = 'TurnEnde' where seq = 6`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 6 });
    });

    it('truncated tail fails against the head', async () => {
      await sql`delete from audit_entries where seq > 8`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 9, count: 8 });
    });
  });

  it('a bulk-built log verifies, in pages', async () => {
    const n = backend.name === 'postgres' ? 20000 : 5000;
    await bulkAuditLog(s.db, key, n);
    expect(await verifyAuditChain(s.db, key, { batchSize: 3000 })).toEqual({ ok: true, count: n, headSeq: n });
  });
});
