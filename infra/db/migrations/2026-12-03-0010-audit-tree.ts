/**
 * The audit log's Merkle tree (docs/AUDIT.md): `audit_head.frontier` (the roots of the tree's
 * complete right-edge subtrees, largest first) and `audit_tree_nodes` (every complete subtree whose
 * level is a positive multiple of 8, i.e. the tlog-tiles tile boundaries). Existing entries are
 * hashed into the tree here, eagerly, under the head row lock, so every later append only extends it.
 * Frozen in time: never edit after release; add a new dated migration instead. It therefore carries
 * its own copy of the leaf encoding (the MACed body) instead of importing the live code.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

const PAGE = 5000;
const STORED_LEVEL_STRIDE = 8;

/** SHA-256 over the given parts. */
function sha256(...parts: Array<Uint8Array | string>): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Adds the tree columns and table, then builds the tree over the entries already there. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_tree_nodes')
    .addColumn('level', 'smallint', (c) => c.notNull().check(sql`level > 0 and level % 8 = 0`))
    .addColumn('idx', 'bigint', (c) => c.notNull().check(sql`idx >= 0`))
    .addColumn('hash', 'bytea', (c) => c.notNull().check(sql`length(hash) = 32`))
    .addPrimaryKeyConstraint('audit_tree_nodes_pkey', ['level', 'idx'])
    .execute();
  await db.schema.alterTable('audit_head').addColumn('frontier', 'bytea', (c) => c.notNull().defaultTo(sql`'\\x'::bytea`)).execute();

  // Appenders of this version wait here; the tree below then matches exactly the entries up to the head.
  const head = await sql<{ seq: string | number }>`select seq from audit_head where id = 1 for update`.execute(db);
  const headSeq = Number(head.rows[0]?.seq ?? 0);
  const frontier: Buffer[] = [];
  const nodes: Array<{ level: number; idx: number; hash: Buffer }> = [];
  let size = 0;
  while (size < headSeq) {
    const rows = await sql<{ seq: string | number; idem_key: string; recorded_at: Date; event: string }>`
      select seq, idem_key, recorded_at, event from audit_entries where seq > ${size} and seq <= ${headSeq} order by seq limit ${PAGE}`.execute(db);
    if (rows.rows.length === 0) break;
    for (const r of rows.rows) {
      const seq = Number(r.seq);
      // A gap stops the build: the tree then covers the entries up to it, and `audit verify` names the gap.
      if (seq !== size + 1) return finish(db, size, frontier, nodes);
      const body = `{"event":${r.event},"idemKey":${JSON.stringify(r.idem_key)},"recordedAt":${JSON.stringify(r.recorded_at.toISOString())},"seq":${seq}}`;
      let hash = sha256(Buffer.from([0]), body);
      let level = 0;
      for (let n = size; n % 2 === 1; n = (n - 1) / 2) {
        hash = sha256(Buffer.from([1]), frontier.pop() as Buffer, hash);
        level++;
        if (level % STORED_LEVEL_STRIDE === 0) nodes.push({ level, idx: (size + 1) / 2 ** level - 1, hash });
      }
      frontier.push(hash);
      size = seq;
    }
    if (nodes.length >= PAGE) await flushNodes(db, nodes);
  }
  await finish(db, size, frontier, nodes);
}

/** Inserts the collected nodes and empties the list. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
async function flushNodes(db: Kysely<any>, nodes: Array<{ level: number; idx: number; hash: Buffer }>): Promise<void> {
  for (let i = 0; i < nodes.length; i += 1000) await db.insertInto('audit_tree_nodes').values(nodes.slice(i, i + 1000)).execute();
  nodes.length = 0;
}

/** Writes the remaining nodes and the frontier (only when the tree covers the whole head). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
async function finish(db: Kysely<any>, size: number, frontier: Buffer[], nodes: Array<{ level: number; idx: number; hash: Buffer }>): Promise<void> {
  await flushNodes(db, nodes);
  await db.updateTable('audit_head').set({ frontier: Buffer.concat(frontier) }).where('id', '=', 1).where('seq', '=', size).execute();
}

/** Drops the tree (the chain stays; running `up` again rebuilds the tree from the entries). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_head').dropColumn('frontier').execute();
  await db.schema.dropTable('audit_tree_nodes').execute();
}
