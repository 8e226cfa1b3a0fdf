import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../core/audit-events.js';
import { appendAuditEntry, auditBody, auditEntriesForTurn, tailAuditEntries, verifyAuditChain } from '../../infra/audit/index.js';
import { canonicalJson } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { openStorageBackends } from '../support/postgres.js';

const key = new Uint8Array(32).fill(7);

function ended(turnId: string, n = 0): AuditEvent {
  return { type: 'TurnEnded', turnId, outcome: 'Completed', toolCallsMade: n, durationMs: 5 };
}

async function fill(s: OpenDatabase, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) await appendAuditEntry(s.db, key, { idemKey: `k${i}`, event: ended(`t${i % 3}`, i) });
}

describe.each(openStorageBackends())('audit log on $name', (backend) => {
  let s: OpenDatabase;
  beforeAll(async () => { s = await backend.open(); });
  afterAll(async () => { await s.close(); });
  beforeEach(async () => {
    await sql`delete from audit_entries`.execute(s.db);
    await sql`update audit_head set seq = 0, mac = ${'0'.repeat(64)} where id = 1`.execute(s.db);
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

  it('8 concurrent appenders produce one gapless valid chain', async () => {
    const per = backend.name === 'postgres' ? 200 : 50;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < per; i++) await appendAuditEntry(s.db, key, { idemKey: `w${w}-${i}`, event: ended(`w${w}`, i) });
      }),
    );
    const rate = (8 * per) / ((performance.now() - t0) / 1000);
    console.log(`${backend.name}: ${rate.toFixed(0)} appends/s with 8 appenders`);
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 8 * per, headSeq: 8 * per });
  });

  describe('tamper detection', () => {
    beforeEach(async () => { await fill(s, 10); });

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
        select 11, 'forged', turn_id, event_type, event, recorded_at, mac, repeat('ab', 32) from audit_entries where seq = 10`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 11, count: 10 });
    });

    it('swapped rows fail at the first of them', async () => {
      await sql`update audit_entries a set idem_key = b.idem_key || '!', event = b.event, mac = b.mac
        from audit_entries b where (a.seq, b.seq) in ((3, 7), (7, 3))`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 3 });
    });

    it('truncated tail fails against the head', async () => {
      await sql`delete from audit_entries where seq > 8`.execute(s.db);
      expect(await verifyAuditChain(s.db, key)).toMatchObject({ ok: false, firstBadSeq: 9, count: 8 });
    });
  });

  it('verifies fast', async () => {
    const n = backend.name === 'postgres' ? 20000 : 5000;
    // Bulk-build a valid chain directly (appending 20k one by one would dominate the test).
    const { auditMac } = await import('../../infra/audit/index.js');
    let prev = '0'.repeat(64);
    const rows = [];
    const at = new Date();
    for (let seq = 1; seq <= n; seq++) {
      const ev = canonicalJson(ended(`t${seq}`, seq));
      const mac = auditMac(key, prev, auditBody(seq, `b${seq}`, at.toISOString(), ev));
      rows.push({ seq, idem_key: `b${seq}`, turn_id: `t${seq}`, event_type: 'TurnEnded', event: ev, recorded_at: at, prev_mac: prev, mac });
      prev = mac;
    }
    for (let i = 0; i < rows.length; i += 1000) await s.db.insertInto('audit_entries').values(rows.slice(i, i + 1000)).execute();
    await s.db.updateTable('audit_head').set({ seq: n, mac: prev }).where('id', '=', 1).execute();
    const t0 = performance.now();
    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: n, headSeq: n });
    console.log(`${backend.name}: verify ${(n / ((performance.now() - t0) / 1000)).toFixed(0)} entries/s`);
  });
});
