/**
 * The audit log on local PostgreSQL, each figure next to a floor measured in the same run:
 *  - appends: one appender (chain + tree) against the same single-statement commit without the
 *    tree (the tree's own cost; target ≤ 1.2×) and against a bare durable commit (one-row insert);
 *  - 8 concurrent appenders (group commit; target ≥ 2,000/s) against 8 clients doing bare commits;
 *  - `audit verify` entries/s (target ≥ 100,000/s) against reading the same pages without checking;
 *  - at 1M entries: signing a checkpoint, an inclusion proof and a consistency proof, against one
 *    indexed single-row read.
 * Run alone with `tsx bench/audit.ts [--quick]` (prints the section), or from bench/run.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { AuditEvent } from '../core/audit-events.js';
import { appendAuditEntry, auditBody, auditMac, createAuditService, checkAuditLog, witnessPath } from '../infra/audit/index.js';
import { RECORDED_AT_ISO } from '../infra/audit/entry.js';
import { canonicalJson } from '../infra/crypto/index.js';
import { openDatabase, type Database } from '../infra/db/index.js';
import { bulkAuditLog } from '../test/support/audit-bulk.js';
import { createTestDatabase } from '../test/support/postgres.js';
import { median } from './stats.js';

/** A fresh database on the bench cluster, dropped by `drop`. */
export type FreshDatabase = () => Promise<{ url: string; drop(): Promise<void> }>;

/** A typical entry: a tool call. */
function toolCall(i: number): AuditEvent {
  return {
    type: 'ToolCall',
    turnId: `turn-${Math.floor(i / 4)}`,
    callId: `call-${i}`,
    toolId: 'fs.read',
    scopeUsed: 'fs.read:/home/me/notes',
    inputHash: 'ab'.repeat(32),
    outcome: 'Ok',
    durationMs: i % 50,
  };
}

/**
 * The chain alone, committed exactly the way the appender commits one entry (the same statement:
 * idempotency lookup, head moved under its row lock, entry inserted) minus everything of the tree
 * (leaf hash, tree edge in the head, tree nodes): the baseline for the tree's own cost.
 */
async function chainOnlyAppends(db: Kysely<Database>, key: Uint8Array, n: number): Promise<number> {
  let seq = 0;
  let mac = '0'.repeat(64);
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const event = canonicalJson(toolCall(i));
    const at = new Date().toISOString();
    const idem = `chain/${i}`;
    const next = auditMac(key, mac, auditBody(seq + 1, idem, at, event));
    const r = await sql<{ updated: number }>`
      with dup as (
        select idem_key, seq, event, mac from audit_entries where idem_key = any(${[idem]}::text[])
      ), h as (
        update audit_head set seq = ${seq + 1}, mac = ${next}
        where id = 1 and seq = ${seq} and mac = ${mac} and not exists (select 1 from dup)
        returning id
      ), ins as (
        insert into audit_entries (seq, idem_key, turn_id, event_type, event, recorded_at, prev_mac, mac)
        select * from unnest(${[seq + 1]}::bigint[], ${[idem]}::text[], ${[`turn-${Math.floor(i / 4)}`]}::text[], ${['ToolCall']}::text[],
                             ${[event]}::text[], ${[at]}::timestamptz[], ${[mac]}::text[], ${[next]}::text[])
        where exists (select 1 from h)
      )
      select (select count(*) from h)::int as updated, d.idem_key, d.seq, d.event, d.mac
      from (select 1) as one left join dup as d on true`.execute(db);
    if (r.rows[0]?.updated !== 1) throw new Error('chain-only baseline lost the head');
    seq++;
    mac = next;
  }
  return (performance.now() - t) / n;
}

/** Our appender, `concurrency` callers each appending in a loop; returns appends/s. */
async function appendRate(db: Kysely<Database>, key: Uint8Array, concurrency: number, total: number): Promise<number> {
  const per = Math.ceil(total / concurrency);
  const run = randomUUID();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; i < per; i++) await appendAuditEntry(db, key, { idemKey: `${run}/${w}/${i}`, event: toolCall(w * per + i) });
    }),
  );
  return (per * concurrency) / ((performance.now() - t) / 1000);
}

/** The floor: bare durable commits (autocommitted one-row inserts) from `clients` connections; commits/s. */
async function bareCommitRate(url: string, clients: number, total: number): Promise<number> {
  const conns = await Promise.all(
    Array.from({ length: clients }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  try {
    await conns[0]?.query('create table if not exists bench_floor (id bigint, note text)');
    const per = Math.ceil(total / clients);
    const t = performance.now();
    await Promise.all(
      conns.map(async (c, w) => {
        for (let i = 0; i < per; i++) await c.query('insert into bench_floor values ($1, $2)', [w * per + i, 'x'.repeat(200)]);
      }),
    );
    return (per * clients) / ((performance.now() - t) / 1000);
  } finally {
    await Promise.all(conns.map((c) => c.end()));
  }
}

/** Empties the log (entries, tree, head). */
async function emptyLog(db: Kysely<Database>): Promise<void> {
  await sql`delete from audit_entries`.execute(db);
  await sql`delete from audit_tree_nodes`.execute(db);
  await sql`update audit_head set seq = 0, mac = ${'0'.repeat(64)}, frontier = ''::bytea where id = 1`.execute(db);
}

/** Median ms of `fn` over `n` runs. */
async function timeMs(n: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    xs.push(performance.now() - t);
  }
  return median(xs);
}

const f0 = (x: number) => x.toFixed(0).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const f2 = (x: number) => x.toFixed(2);

/** Markdown lines of the audit section (see the module comment). */
export async function benchAudit(opts: { freshDatabase: FreshDatabase; quick?: boolean }): Promise<string[]> {
  const key = new Uint8Array(32).fill(11);
  const seed = new Uint8Array(32).fill(12);
  const big = opts.quick ? 100_000 : 1_000_000;
  const appends = opts.quick ? 900 : 2800;

  // 1. One appender: chain + tree vs chain alone vs a bare commit, alternating to share the noise.
  const a = await opts.freshDatabase();
  const b = await opts.freshDatabase();
  const dbA = await openDatabase({ databaseUrl: a.url, poolSize: 12 });
  const dbB = await openDatabase({ databaseUrl: b.url, poolSize: 4 });
  const lines: string[] = [];
  try {
    const tree: number[] = [];
    const chain: number[] = [];
    const bare: number[] = [];
    const eights: number[] = [];
    const eightBares: number[] = [];
    // Many short alternating rounds, medians: the machine is shared, and load comes and goes.
    const rounds = opts.quick ? 3 : 7;
    for (let r = 0; r < rounds; r++) {
      await emptyLog(dbB.db);
      chain.push(await chainOnlyAppends(dbB.db, key, appends / rounds));
      tree.push(1000 / (await appendRate(dbA.db, key, 1, appends / rounds)));
      bare.push(1000 / (await bareCommitRate(b.url, 1, appends / rounds)));
      eights.push(await appendRate(dbA.db, key, 8, (8 * appends) / rounds));
      eightBares.push(await bareCommitRate(b.url, 8, (8 * appends) / rounds));
    }
    const treeMs = median(tree);
    const chainMs = median(chain);
    const bareMs = median(bare);
    const eight = median(eights);
    const eightBare = median(eightBares);

    // 3. A big log: verify, then checkpoint and proofs at that size.
    await emptyLog(dbB.db);
    const tb = performance.now();
    await bulkAuditLog(dbB.db, key, big, { chunk: 10_000, event: toolCall });
    const buildS = (performance.now() - tb) / 1000;
    const tr = performance.now();
    for (let from = 1; from <= big; from += 10_000) {
      await dbB.db
        .selectFrom('audit_entries')
        .select(['seq', 'idem_key', 'turn_id', 'event_type', 'event', RECORDED_AT_ISO.as('at'), 'prev_mac', 'mac'])
        .where('seq', '>=', from)
        .where('seq', '<', from + 10_000)
        .orderBy('seq')
        .execute();
    }
    const readRate = big / ((performance.now() - tr) / 1000);
    const tv = performance.now();
    const verified = await checkAuditLog(dbB.db, key);
    const verifyRate = verified.count / ((performance.now() - tv) / 1000);
    if (!verified.ok) throw new Error(`bench log did not verify: ${verified.reason}`);

    const home = mkdtempSync(join(tmpdir(), 'aivyx-bench-audit-'));
    const audit = createAuditService({ db: dbB.db, auditKey: key, checkpointSeed: seed, witnessPath: witnessPath(home) });
    const rowMs = await timeMs(50, (i) =>
      dbB.db
        .selectFrom('audit_entries')
        .select(['event', 'mac'])
        .where('seq', '=', 1 + ((i * 7919) % big))
        .executeTakeFirst(),
    );
    let t = performance.now();
    const first = await audit.checkpoint();
    const firstMs = performance.now() - t;
    await appendAuditEntry(dbB.db, key, { idemKey: 'one-more', event: toolCall(0) });
    t = performance.now();
    await audit.checkpoint();
    const nextMs = performance.now() - t;
    const proveMs = await timeMs(20, (i) => audit.prove(1 + ((i * 104_729) % big)));
    const consistencyMs = await timeMs(10, () => audit.consistency(first.text));

    const size = f0(big);
    lines.push(
      '## Audit log',
      '',
      `Medians of ${opts.quick ? 3 : 7} alternating rounds for the appends, on PostgreSQL at 127.0.0.1:5432 (fsync on, synchronous_commit on), ${cpus().length} cores shared with the database. Each ratio is to the floor in the same row, measured in the same run.`,
      'Appends are `appendAuditEntry` (group commit: one statement per commit extends the chain, inserts entries and tree nodes, and moves the head under its row lock); events are ToolCall entries.',
      '',
      '| measure | value | floor (same run) | ratio |',
      '|---|---|---|---|',
      `| append, 1 appender, chain + tree | ${f2(treeMs)} ms | chain alone, same commit path: ${f2(chainMs)} ms | **${f2(treeMs / chainMs)}×** (target ≤ 1.2×) |`,
      `| append, 1 appender, chain + tree | ${f2(treeMs)} ms | bare durable commit (1-row insert): ${f2(bareMs)} ms | ${f2(treeMs / bareMs)}× |`,
      `| appends/s, 8 concurrent appenders | **${f0(eight)}** (target ≥ 2,000) | 8 clients of bare commits: ${f0(eightBare)}/s | ${f2(eight / eightBare)}× |`,
      `| \`audit verify\` entries/s (chain, tree, ${size} entries) | **${f0(verifyRate)}** (target ≥ 100,000) | reading the same pages unchecked: ${f0(readRate)} rows/s | ${f2(verifyRate / readRate)}× |`,
      `| sign a checkpoint at ${size} entries (first: tree root recomputed from stored nodes) | ${f2(firstMs)} ms | one indexed row read: ${f2(rowMs)} ms | ${f2(firstMs / rowMs)}× |`,
      `| sign the next checkpoint (+1 entry; consistency with the witnessed one proved first) | ${f2(nextMs)} ms | ${f2(rowMs)} ms | ${f2(nextMs / rowMs)}× |`,
      `| inclusion proof at ${size} entries (\`audit prove\`, median of 20) | ${f2(proveMs)} ms | ${f2(rowMs)} ms | ${f2(proveMs / rowMs)}× |`,
      `| consistency proof ${size} → ${f0(big + 1)} (\`audit consistency\`, median of 10) | ${f2(consistencyMs)} ms | ${f2(rowMs)} ms | ${f2(consistencyMs / rowMs)}× |`,
      '',
      `(Bulk-loading the ${size}-entry log for this section took ${buildS.toFixed(1)} s.)`,
    );
  } finally {
    await dbA.close();
    await dbB.close();
    await a.drop();
    await b.drop();
  }
  return lines;
}

/** Run alone: a fresh database per use on the test cluster (AIVYX_TEST_PG_ADMIN_URL). */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const freshDatabase: FreshDatabase = () => createTestDatabase('aivyx_bench');
  process.stdout.write(`${(await benchAudit({ freshDatabase, quick: process.argv.includes('--quick') })).join('\n')}\n`);
  process.exit(0);
}
