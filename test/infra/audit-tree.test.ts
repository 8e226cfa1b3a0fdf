/**
 * The audit log's Merkle tree, signed checkpoints and witness file (docs/AUDIT.md), against real
 * databases: proofs checked by an independent verifier written here from RFC 9162 and the C2SP
 * specs (it imports nothing from infra/audit), and the attacks the chain alone misses.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, verify as ed25519Verify } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../core/audit-events.js';
import {
  appendAuditEntry,
  auditBody,
  auditMac,
  createAuditService,
  startAuditCheckpoints,
  verifyAuditChain,
  witnessPath,
  type AuditService,
} from '../../infra/audit/index.js';
import { canonicalJson } from '../../infra/crypto/index.js';
import { migrateToLatest, openDatabase, type Database, type OpenDatabase } from '../../infra/db/index.js';
import { migrations } from '../../infra/db/migrations/index.js';
import { bulkAuditLog } from '../support/audit-bulk.js';
import { createTestDatabase, openStorageBackends } from '../support/postgres.js';

const key = new Uint8Array(32).fill(7);
const seed = new Uint8Array(32).fill(9);
const T = 1767225600;

// ---- An independent checker, from RFC 9162 §2.1 and c2sp.org/signed-note + tlog-checkpoint. ----
const sha = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafOf = (bytes: string) => sha(Buffer.from([0]), Buffer.from(bytes, 'utf8'));
const nodeOf = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);
const split = (n: number) => 2 ** Math.floor(Math.log2(n - 1));
const mth = (leaves: Buffer[]): Buffer =>
  leaves.length === 0
    ? sha()
    : leaves.length === 1
      ? leaves[0]!
      : nodeOf(mth(leaves.slice(0, split(leaves.length))), mth(leaves.slice(split(leaves.length))));
/** Root from PATH(m, D[n]) (siblings leaf to root), by the definition's recursion. */
function rootFromPath(m: number, n: number, leaf: Buffer, path: Buffer[]): Buffer {
  if (n === 1) return path.length === 0 ? leaf : Buffer.alloc(0);
  const k = split(n);
  const top = path[path.length - 1] ?? Buffer.alloc(0);
  const rest = path.slice(0, -1);
  return m < k ? nodeOf(rootFromPath(m, k, leaf, rest), top) : nodeOf(top, rootFromPath(m - k, n - k, leaf, rest));
}
/** [old root, new root] from SUBPROOF(m, D[n], b), by the definition's recursion. */
function rootsFromSubproof(m: number, n: number, b: boolean, proof: Buffer[], oldRoot: Buffer): [Buffer, Buffer] {
  if (m === n)
    return b
      ? proof.length === 0
        ? [oldRoot, oldRoot]
        : [Buffer.alloc(0), Buffer.alloc(0)]
      : proof.length === 1
        ? [proof[0]!, proof[0]!]
        : [Buffer.alloc(0), Buffer.alloc(0)];
  const k = split(n);
  const top = proof[proof.length - 1] ?? Buffer.alloc(0);
  if (m <= k) {
    const [o, nw] = rootsFromSubproof(m, k, b, proof.slice(0, -1), oldRoot);
    return [o, nodeOf(nw, top)];
  }
  const [o, nw] = rootsFromSubproof(m - k, n - k, false, proof.slice(0, -1), oldRoot);
  return [nodeOf(top, o), nodeOf(top, nw)];
}
/** Opens a checkpoint note with a vkey: checks key ID and Ed25519 signature, returns size and root. */
function checkNote(note: string, vkey: string): { origin: string; size: number; root: Buffer } {
  const [name, hexId, b64] = vkey.split('+') as [string, string, string];
  const pub = Buffer.from(b64, 'base64').subarray(1);
  expect(
    sha(Buffer.from(`${name}\n`), Buffer.from([1]), pub)
      .subarray(0, 4)
      .toString('hex'),
  ).toBe(hexId);
  const cut = note.lastIndexOf('\n\n');
  const text = note.slice(0, cut + 1);
  const sigLine = note.slice(cut + 2).trimEnd();
  expect(sigLine.startsWith(`\u2014 ${name} `)).toBe(true);
  const sig = Buffer.from(sigLine.slice(`\u2014 ${name} `.length), 'base64');
  expect(sig.subarray(0, 4).toString('hex')).toBe(hexId);
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]);
  expect(ed25519Verify(null, Buffer.from(text), createPublicKey({ key: spki, format: 'der', type: 'spki' }), sig.subarray(4))).toBe(true);
  const [origin, size, root] = text.split('\n') as [string, string, string];
  return { origin, size: Number(size), root: Buffer.from(root, 'base64') };
}
/** The leaf bytes of an entry as docs/AUDIT.md defines them, from the stored row. */
async function leavesOf(db: Kysely<Database>, upTo: number): Promise<Buffer[]> {
  const rows = await db
    .selectFrom('audit_entries')
    .select(['seq', 'idem_key', 'event', 'recorded_at'])
    .where('seq', '<=', upTo)
    .orderBy('seq')
    .execute();
  return rows.map((r) =>
    leafOf(`{"event":${r.event},"idemKey":${JSON.stringify(r.idem_key)},"recordedAt":"${r.recorded_at.toISOString()}","seq":${r.seq}}`),
  );
}
// ---------------------------------------------------------------------------------------------

function ended(turnId: string, n = 0): AuditEvent {
  return { type: 'TurnEnded', turnId, outcome: 'Completed', toolCallsMade: n, durationMs: 5 };
}

async function resetLog(db: Kysely<Database>): Promise<void> {
  await sql`delete from audit_entries`.execute(db);
  await sql`delete from audit_tree_nodes`.execute(db);
  await sql`update audit_head set seq = 0, mac = ${'0'.repeat(64)}, frontier = ''::bytea where id = 1`.execute(db);
}

async function fill(db: Kysely<Database>, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) await appendAuditEntry(db, key, { idemKey: `k${i}`, event: ended(`t${i}`, i) });
}

async function headRow(db: Kysely<Database>) {
  return db.selectFrom('audit_head').select(['seq', 'mac', 'frontier']).where('id', '=', 1).executeTakeFirstOrThrow();
}

function serviceFor(db: Kysely<Database>, home: string, checkpointSeed = seed): AuditService {
  return createAuditService({ db, auditKey: key, checkpointSeed, witnessPath: witnessPath(home), now: () => T });
}

describe.each(openStorageBackends())('audit tree and checkpoints on $name', (backend) => {
  let s: OpenDatabase;
  let home: string;
  let audit: AuditService;
  beforeAll(async () => {
    s = await backend.open();
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await resetLog(s.db);
    home = mkdtempSync(join(tmpdir(), 'aivyx-audit-'));
    audit = serviceFor(s.db, home);
  });

  it('checkpoints are C2SP signed notes that an independent verifier opens with the printed key', async () => {
    const empty = await audit.checkpoint();
    expect(checkNote(empty.text, audit.pubkey().vkey)).toEqual({ origin: audit.pubkey().origin, size: 0, root: sha() });
    await fill(s.db, 1, 7);
    const cp = await audit.checkpoint();
    expect(cp.text).toMatch(
      new RegExp(
        `^aivyx\\.local/audit/[0-9a-f]{16}\\n7\\n[A-Za-z0-9+/]{43}=\\ntime ${T}\\n\\n\u2014 aivyx\\.local/audit/[0-9a-f]{16} [A-Za-z0-9+/]+=*\\n$`,
      ),
    );
    const opened = checkNote(cp.text, audit.pubkey().vkey);
    expect(opened.size).toBe(7);
    expect(opened.root.equals(mth(await leavesOf(s.db, 7)))).toBe(true);
    // Unchanged log → the same checkpoint, not a new note; both are in the witness file.
    expect((await audit.checkpoint()).text).toBe(cp.text);
    expect(readFileSync(witnessPath(home), 'utf8')).toBe(`${empty.text}\n${cp.text}\n`);
  });

  it('inclusion proofs of entries across tile boundaries check out with the independent verifier', async () => {
    const n = 700;
    await bulkAuditLog(s.db, key, n);
    const leaves = await leavesOf(s.db, n);
    const root = mth(leaves);
    for (const seq of [1, 2, 3, 128, 255, 256, 257, 300, 511, 512, 513, 640, 699, 700]) {
      const p = await audit.prove(seq);
      expect(checkNote(p.checkpoint, audit.pubkey().vkey)).toMatchObject({ size: n });
      expect(checkNote(p.checkpoint, audit.pubkey().vkey).root.equals(root)).toBe(true);
      // The leaf bytes are the entry's MACed body, exactly as the documentation defines them.
      expect(leafOf(p.entry).equals(leaves[seq - 1]!)).toBe(true);
      expect(p).toMatchObject({ seq, leafIndex: seq - 1, treeSize: n, leafHash: leaves[seq - 1]!.toString('base64') });
      expect(
        rootFromPath(
          seq - 1,
          n,
          leafOf(p.entry),
          p.proof.map((h) => Buffer.from(h, 'base64')),
        ).equals(root),
      ).toBe(true);
      // …and not for another leaf.
      expect(
        rootFromPath(
          seq - 1,
          n,
          leaves[seq % n]!,
          p.proof.map((h) => Buffer.from(h, 'base64')),
        ).equals(root),
      ).toBe(false);
    }
    await expect(audit.prove(n + 1)).rejects.toMatchObject({
      kind: 'NotFound',
      message: `entry ${n + 1} is not in the log (it has ${n} entries)`,
    });
  });

  it('consistency proofs from older checkpoints check out with the independent verifier', async () => {
    const sizes = [1, 2, 3, 4, 7, 8, 9, 255, 256, 257, 300, 511, 512, 513, 770];
    const old: string[] = [];
    let size = 0;
    for (const target of sizes) {
      size = await bulkAuditLog(s.db, key, target - size, { chunk: 400 });
      old.push((await audit.checkpoint()).text);
    }
    const newest = checkNote(old[old.length - 1]!, audit.pubkey().vkey);
    for (const text of old) {
      const before = checkNote(text, audit.pubkey().vkey);
      const c = await audit.consistency(text);
      expect(c).toMatchObject({ oldSize: before.size, newSize: size });
      expect(checkNote(c.checkpoint, audit.pubkey().vkey).root.equals(newest.root)).toBe(true);
      const [o, nw] =
        before.size === size
          ? [before.root, before.root]
          : rootsFromSubproof(
              before.size,
              size,
              true,
              c.proof.map((h) => Buffer.from(h, 'base64')),
              before.root,
            );
      expect(o.equals(before.root)).toBe(true);
      expect(nw.equals(newest.root)).toBe(true);
      if (c.proof.length > 0) {
        const bent = c.proof.map((h, i) => (i === 0 ? Buffer.from(h, 'base64').fill(0, 0, 1) : Buffer.from(h, 'base64')));
        const [o2, n2] = rootsFromSubproof(before.size, size, true, bent, before.root);
        expect(o2.equals(before.root) && n2.equals(newest.root)).toBe(false);
      }
    }
  });

  it('tail truncation with the head (and tree edge) rewound: the chain alone passes, the witness catches it', async () => {
    await fill(s.db, 1, 3);
    const at3 = await headRow(s.db);
    await fill(s.db, 4, 5);
    await audit.checkpoint();
    // The attacker deletes entries 4–5 and puts back the head row as it was at entry 3.
    await sql`delete from audit_entries where seq > 3`.execute(s.db);
    await s.db.updateTable('audit_head').set(at3).where('id', '=', 1).execute();

    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 3, headSeq: 3 });
    const r = await audit.verify();
    expect(r).toMatchObject({ ok: false, failed: 'checkpoint', firstBadSeq: 4, count: 3 });
    expect(r.reason).toBe(
      `checkpoint #1 of ${witnessPath(home)} (line 1) (size 5, signed 2026-01-01T00:00:00.000Z) is ahead of the log, which has 3 entries: entries 4–5 were removed (the tail was truncated and the head rewound, or the database was restored from an older backup)`,
    );
    // …and the log refuses to sign a checkpoint that contradicts the witnessed one.
    await expect(audit.checkpoint()).rejects.toMatchObject({
      kind: 'Audit',
      message: expect.stringMatching(/^refusing to sign a checkpoint: the log has 3 entries but the newest witnessed checkpoint has 5/),
    });
  });

  it('a modified middle entry is named by the chain', async () => {
    await fill(s.db, 1, 5);
    await audit.checkpoint();
    await sql`update audit_entries set event = replace(event, '"toolCallsMade":3', '"toolCallsMade":4') where seq = 3`.execute(s.db);
    expect(await audit.verify()).toMatchObject({
      ok: false,
      failed: 'chain',
      firstBadSeq: 3,
      reason: 'entry 3 MAC mismatch (modified, forged or moved)',
    });
  });

  it('history rewritten by someone holding the audit key passes chain and tree but not the witness', async () => {
    await fill(s.db, 1, 2);
    const first = await audit.checkpoint();
    const at2 = await headRow(s.db);
    await fill(s.db, 3, 5);
    await audit.checkpoint();
    // A compromised host drops entries 3–5 and writes other ones with valid MACs and a valid tree.
    await sql`delete from audit_entries where seq > 2`.execute(s.db);
    await s.db.updateTable('audit_head').set(at2).where('id', '=', 1).execute();
    for (let i = 3; i <= 5; i++) await appendAuditEntry(s.db, key, { idemKey: `rewritten${i}`, event: ended('innocent', i) });

    expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 5, headSeq: 5 });
    const r = await audit.verify();
    expect(r).toMatchObject({ ok: false, failed: 'checkpoint', firstBadSeq: 3, checkpoints: { matched: 1, newest: { size: 2 } } });
    expect(r.reason).toMatch(
      new RegExp(
        `^checkpoint #2 of ${witnessPath(home)} \\(line 8\\) \\(size 5, signed .*\\) disagrees with entries 3–5: the log was rewritten`,
      ),
    );
    await expect(audit.checkpoint()).rejects.toMatchObject({
      message: expect.stringMatching(/does not extend the newest witnessed checkpoint \(size 5\)/),
    });
    // Entries 1–2 are untouched, but no new checkpoint (and so no proof) is issued over the rewrite.
    await expect(audit.consistency(first.text)).rejects.toMatchObject({ message: expect.stringMatching(/^refusing to sign a checkpoint/) });
  });

  it('a forged checkpoint is refused, passed in or planted in the witness file', async () => {
    await fill(s.db, 1, 5);
    const cp = await audit.checkpoint();
    const forged = cp.text.replace(/\n5\n/, '\n9\n');
    const r = await audit.verify({ checkpoint: forged, source: 'forged.txt' });
    expect(r).toMatchObject({
      ok: false,
      failed: 'checkpoint',
      reason: 'checkpoint forged.txt has a signature that does not verify: it was forged or altered after signing',
    });
    await expect(audit.consistency(forged)).rejects.toMatchObject({
      kind: 'Audit',
      message: 'checkpoint given has a signature that does not verify: it was forged or altered after signing',
    });
    // Someone who makes a key of their own under this log's name signs nothing this log accepts.
    const impostor = serviceFor(s.db, mkdtempSync(join(tmpdir(), 'aivyx-impostor-')), new Uint8Array(32).fill(1));
    const theirs = (await impostor.checkpoint()).text.split('\n');
    const renamed = [
      audit.verifier.origin,
      ...theirs.slice(1, -2),
      theirs[theirs.length - 2]!.replace(impostor.verifier.origin, audit.verifier.origin),
      '',
    ].join('\n');
    expect((await audit.verify({ checkpoint: renamed, source: 'impostor.txt' })).reason).toBe(
      `checkpoint impostor.txt carries no signature by this log's key (${audit.pubkey().vkey}): forged, or from another install`,
    );
    // Planted in the witness file, it is named by position and line.
    appendFileSync(witnessPath(home), `${forged}\n`);
    expect(await audit.verify()).toMatchObject({
      ok: false,
      failed: 'checkpoint',
      reason: `checkpoint #2 of ${witnessPath(home)} (line 8) has a signature that does not verify: it was forged or altered after signing`,
    });
  });

  it('a checkpoint from another install is recognised as such', async () => {
    await fill(s.db, 1, 3);
    const other = serviceFor(s.db, mkdtempSync(join(tmpdir(), 'aivyx-other-')), new Uint8Array(32).fill(2));
    const theirs = await other.checkpoint();
    expect(other.pubkey().vkey).not.toBe(audit.pubkey().vkey);
    const r = await audit.verify({ checkpoint: theirs.text, source: 'other.txt' });
    expect(r).toMatchObject({ ok: false, failed: 'checkpoint' });
    expect(r.reason).toBe(
      `checkpoint other.txt is for log ${other.verifier.origin}, not this one (${audit.verifier.origin}): a checkpoint from another install`,
    );
    await expect(audit.consistency(theirs.text)).rejects.toMatchObject({
      message: `checkpoint given is for log ${other.verifier.origin}, not this one (${audit.verifier.origin}): a checkpoint from another install`,
    });
  });

  it('a tampered tree node or tree edge is named, and proofs through it are refused', async () => {
    await bulkAuditLog(s.db, key, 300);
    await audit.checkpoint();
    const node = await s.db
      .selectFrom('audit_tree_nodes')
      .select('hash')
      .where('level', '=', 8)
      .where('idx', '=', 0)
      .executeTakeFirstOrThrow();
    await s.db
      .updateTable('audit_tree_nodes')
      .set({ hash: Buffer.alloc(32, 0xee) })
      .where('level', '=', 8)
      .where('idx', '=', 0)
      .execute();
    expect(await audit.verify()).toMatchObject({
      ok: false,
      failed: 'tree',
      firstBadSeq: 1,
      reason: 'tree node for entries 1–256 disagrees with those entries',
    });
    await expect(audit.prove(280)).rejects.toMatchObject({
      kind: 'Audit',
      message: 'the stored tree does not prove entry 280 against checkpoint 300',
    });
    await s.db.updateTable('audit_tree_nodes').set({ hash: node.hash }).where('level', '=', 8).where('idx', '=', 0).execute();

    const { frontier } = await headRow(s.db);
    await s.db
      .updateTable('audit_head')
      .set({ frontier: Buffer.alloc(frontier.length, 1) })
      .where('id', '=', 1)
      .execute();
    expect(await audit.verify()).toMatchObject({
      ok: false,
      failed: 'tree',
      reason: "audit_head's tree edge disagrees with entries 1–300 (checkpoints signed from it would be wrong)",
    });
    await s.db.updateTable('audit_head').set({ frontier }).where('id', '=', 1).execute();

    await sql`delete from audit_tree_nodes`.execute(s.db);
    expect(await audit.verify()).toMatchObject({ ok: false, failed: 'tree', reason: 'tree node for entries 1–256 is missing' });
    await expect(audit.prove(280)).rejects.toMatchObject({ kind: 'Audit', message: 'tree node for entries 1–256 is missing' });
  });

  it('an honest log of 100,000 entries verifies against its checkpoint', async () => {
    const n = backend.name === 'postgres' ? 100_000 : 30_000;
    await bulkAuditLog(s.db, key, n, { chunk: 10_000 });
    await audit.checkpoint();
    const r = await audit.verify();
    expect(r).toMatchObject({ ok: true, count: n, headSeq: n, checkpoints: { matched: 1, newest: { size: n } } });
    expect(r.warning).toBeUndefined();
  }, 300_000);

  it('without any checkpoint, verify says what it cannot rule out', async () => {
    await fill(s.db, 1, 2);
    expect(await audit.verify()).toMatchObject({
      ok: true,
      warning: `no checkpoint found (${witnessPath(home)} is missing or empty): a truncated tail cannot be detected`,
    });
  });

  it('the checkpoint writer signs after TurnEnded/MissionEnded commits, every N entries and on its timer', async () => {
    const lines: string[] = [];
    const writer = startAuditCheckpoints({ db: s.db, service: audit, every: 10, seconds: 0, log: (l) => lines.push(l) });
    const sizes = () => [...readFileSync(witnessPath(home), 'utf8').matchAll(/^\d+$/gm)].map((m) => Number(m[0]));
    try {
      await writer.flush();
      expect(sizes()).toEqual([0]);
      const call = (i: number): AuditEvent => ({
        type: 'ToolCall',
        turnId: 't',
        callId: `c${i}`,
        toolId: 'fs.read',
        scopeUsed: 'fs.read',
        inputHash: 'x',
        outcome: 'Ok',
        durationMs: 1,
      });
      for (let i = 1; i <= 3; i++) await appendAuditEntry(s.db, key, { idemKey: `c${i}`, event: call(i) });
      await writer.flush();
      expect(sizes()).toEqual([0]);
      await appendAuditEntry(s.db, key, { idemKey: 'end', event: ended('t') });
      await writer.flush();
      expect(sizes()).toEqual([0, 4]);
      await appendAuditEntry(s.db, key, {
        idemKey: 'mend',
        event: { type: 'MissionEnded', turnId: 'm', missionId: 'm', state: 'completed' },
      });
      await writer.flush();
      expect(sizes()).toEqual([0, 4, 5]);
      for (let i = 4; i <= 13; i++) await appendAuditEntry(s.db, key, { idemKey: `c${i}`, event: call(i) });
      await writer.flush();
      expect(sizes()).toEqual([0, 4, 5, 15]);
    } finally {
      await writer.stop();
    }
    // The timer catches appends this process did not make (here: inside a transaction).
    const timed = startAuditCheckpoints({ db: s.db, service: audit, every: 0, seconds: 1, log: (l) => lines.push(l) });
    try {
      await s.db.transaction().execute((trx) => appendAuditEntry(trx, key, { idemKey: 'elsewhere', event: ended('x') }));
      await expect.poll(sizes, { timeout: 10_000, interval: 100 }).toEqual([0, 4, 5, 15, 16]);
      // A rolled-back database is an alarm, said once, and nothing is signed.
      await sql`delete from audit_entries where seq > 10`.execute(s.db);
      await s.db
        .updateTable('audit_head')
        .set({ seq: 10, mac: sql`(select mac from audit_entries where seq = 10)` })
        .where('id', '=', 1)
        .execute();
      await expect.poll(() => lines.length, { timeout: 10_000, interval: 100 }).toBe(1);
      expect(lines[0]).toMatch(/^audit: ALARM: /);
      await new Promise((r) => setTimeout(r, 2500));
      expect(lines).toHaveLength(1);
      expect(sizes()).toEqual([0, 4, 5, 15, 16]);
    } finally {
      await timed.stop();
    }
  });
});

describe.each(['postgres', 'pglite'] as const)('an existing %s database without a tree', (kind) => {
  it('is upgraded by the migration: the tree is built for the old entries and appends continue', async () => {
    const pg = kind === 'postgres' ? await createTestDatabase('audit_upgrade') : undefined;
    const { db, close } = await openDatabase(pg ? { databaseUrl: pg.url } : { pgliteDir: 'memory://' });
    try {
      // Roll back to the schema before the tree, then write a chain the way the old code did.
      const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
      const down = await migrator.migrateTo('2026-12-02-0003-memory-index');
      expect(down.error).toBeUndefined();
      let prev = '0'.repeat(64);
      const n = 600;
      for (let seq = 1; seq <= n; seq++) {
        const event = canonicalJson(ended(`t${seq}`, seq));
        const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, seq));
        const mac = auditMac(key, prev, auditBody(seq, `old${seq}`, at.toISOString(), event));
        await sql`insert into audit_entries (seq, idem_key, turn_id, event_type, event, recorded_at, prev_mac, mac) values (${seq}, ${`old${seq}`}, ${`t${seq}`}, 'TurnEnded', ${event}, ${at}, ${prev}, ${mac})`.execute(
          db,
        );
        prev = mac;
      }
      await sql`update audit_head set seq = ${n}, mac = ${prev} where id = 1`.execute(db);

      await migrateToLatest(db);
      const home = mkdtempSync(join(tmpdir(), 'aivyx-upgrade-'));
      const audit = serviceFor(db, home);
      const leaves = await leavesOf(db, n);
      expect(checkNote((await audit.checkpoint()).text, audit.pubkey().vkey).root.equals(mth(leaves))).toBe(true);
      const p = await audit.prove(300);
      expect(
        rootFromPath(
          299,
          n,
          leaves[299]!,
          p.proof.map((h) => Buffer.from(h, 'base64')),
        ).equals(mth(leaves)),
      ).toBe(true);
      await appendAuditEntry(db, key, { idemKey: 'new', event: ended('new') });
      expect(await audit.verify()).toMatchObject({ ok: true, count: n + 1, checkpoints: { matched: 1 } });
    } finally {
      await close();
      await pg?.drop();
    }
  }, 120_000);
});

describe.each(['postgres', 'pglite'] as const)('a %s database restored from an older backup', (kind) => {
  it('is caught against the witness file, and new checkpoints are refused', async () => {
    const home = mkdtempSync(join(tmpdir(), 'aivyx-restore-'));
    const pg = kind === 'postgres' ? await createTestDatabase('audit_restore') : undefined;
    const dir = join(home, 'pglite');
    const backupFile = join(home, 'backup');
    const open = () => openDatabase(pg ? { databaseUrl: pg.url } : { pgliteDir: dir });
    let s = await open();
    const lines: string[] = [];
    try {
      const writer = startAuditCheckpoints({ db: s.db, service: serviceFor(s.db, home), every: 1, seconds: 0, log: (l) => lines.push(l) });
      await fill(s.db, 1, 5);
      await writer.flush();
      // The backup: pg_dump of the database, or a copy of the stopped PGlite data directory.
      if (pg) execFileSync('pg_dump', ['-Fc', '-f', backupFile, pg.url]);
      else {
        await writer.stop();
        await s.close();
        cpSync(dir, backupFile, { recursive: true });
        s = await open();
      }
      const writer2 = pg
        ? writer
        : startAuditCheckpoints({ db: s.db, service: serviceFor(s.db, home), every: 1, seconds: 0, log: (l) => lines.push(l) });
      await fill(s.db, 6, 9);
      await writer2.flush();
      await writer2.stop();
      // The restore.
      if (pg) execFileSync('pg_restore', ['--clean', '--if-exists', '-d', pg.url, backupFile]);
      else {
        await s.close();
        rmSync(dir, { recursive: true });
        cpSync(backupFile, dir, { recursive: true });
        s = await open();
      }
      const audit = serviceFor(s.db, home);
      expect(await verifyAuditChain(s.db, key)).toEqual({ ok: true, count: 5, headSeq: 5 });
      const r = await audit.verify();
      expect(r).toMatchObject({ ok: false, failed: 'checkpoint', firstBadSeq: 6, count: 5, checkpoints: { newest: { size: 5 } } });
      expect(r.reason).toMatch(
        /^checkpoint #\d+ of .*audit-checkpoints \(line \d+\) \(size 9, signed .*\) is ahead of the log, which has 5 entries: entries 6–9 were removed/,
      );

      // Life goes on after the restore: new, different entries past the old size. The witness still disagrees.
      for (let i = 6; i <= 12; i++) await appendAuditEntry(s.db, key, { idemKey: `after-restore-${i}`, event: ended('after', i) });
      const again = await audit.verify();
      expect(again).toMatchObject({ ok: false, failed: 'checkpoint', firstBadSeq: 6 });
      expect(again.reason).toMatch(
        /\(size \d+, signed .*\) disagrees with entr(y 6|ies 6–\d+): the log was rewritten after it was signed, or restored from a backup that diverges from it$/,
      );
      await expect(audit.checkpoint()).rejects.toMatchObject({
        kind: 'Audit',
        message: expect.stringMatching(/^refusing to sign a checkpoint/),
      });
      expect(lines).toEqual([]);
    } finally {
      await s.close();
      await pg?.drop();
    }
  }, 120_000);
});

describe('the witness file', () => {
  it('a torn last write is not a forgery: the complete checkpoints before it still count', async () => {
    const { splitNotes } = await import('../../infra/audit/index.js');
    const a = 'o\n1\nAAAA\n\n\u2014 o AAAA\n';
    expect(splitNotes(`${a}\n${a}\no\n2\nBB`)).toMatchObject({
      notes: [
        { index: 1, line: 1 },
        { index: 2, line: 7 },
      ],
      incomplete: 1,
    });
    expect(splitNotes(`${a}\n${a.slice(0, -3)}`)).toMatchObject({ notes: [{ index: 1 }], incomplete: 1 });
  });
});
