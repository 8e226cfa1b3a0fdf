/**
 * The audit tree as stored: complete subtrees at every 8th level (`audit_tree_nodes`, the
 * tlog-tiles tile boundaries) and the entries themselves as level 0. Any other complete subtree is
 * recomputed from at most 256 stored hashes of one tile, so a proof at a million entries reads
 * about three tiles.
 */
import type { Kysely, Transaction } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import type { Database } from '../db/database.js';
import { auditBody, entryLeafHash, RECORDED_AT_ISO } from './entry.js';
import { consistencyProof, inclusionProof, nodeHash, rangeHash, type SubtreeSource } from './merkle.js';

/** A database handle or an open transaction. */
type Db = Kysely<Database> | Transaction<Database>;

/** Levels 8, 16, 24… are stored; the ones in between are recomputed within a tile. */
export const STORED_LEVEL_STRIDE = 8;

/** Hashes per tile: one stored level's worth of children of the next stored level. */
export const TILE_WIDTH = 2 ** STORED_LEVEL_STRIDE;

/** Whether complete subtrees of this level are written to `audit_tree_nodes`. */
export function isStoredLevel(level: number): boolean {
  return level > 0 && level % STORED_LEVEL_STRIDE === 0;
}

/** "entries a–b": the entries (seq, 1-based) a complete subtree covers, for messages. */
export function entriesOf(level: number, index: number): string {
  const first = index * 2 ** level + 1;
  const last = (index + 1) * 2 ** level;
  return first === last ? `entry ${first}` : `entries ${first}–${last}`;
}

/** The tree of the first `size` entries, read from the database with a per-instance tile cache. */
export class StoredTree implements SubtreeSource {
  readonly #db: Db;
  readonly #size: number;
  readonly #tiles = new Map<string, Promise<Buffer[]>>();

  constructor(db: Db, size: number) {
    this.#db = db;
    this.#size = size;
  }

  /** Number of leaves of this tree. */
  get size(): number {
    return this.#size;
  }

  /** The hash of a complete subtree (2^level entries from index · 2^level). */
  async node(level: number, index: number): Promise<Buffer> {
    const span = 2 ** level;
    if ((index + 1) * span > this.#size)
      throw new AivyxError('Internal', `subtree (${level}, ${index}) is not complete in a tree of ${this.#size}`);
    const base = level - (level % STORED_LEVEL_STRIDE);
    const width = 2 ** (level - base);
    const first = index * width;
    const tileIndex = Math.floor(first / TILE_WIDTH);
    const tile = await this.#tile(base, tileIndex);
    let layer = tile.slice(first - tileIndex * TILE_WIDTH, first - tileIndex * TILE_WIDTH + width);
    while (layer.length > 1) {
      const next: Buffer[] = [];
      for (let i = 0; i < layer.length; i += 2) next.push(nodeHash(layer[i] as Buffer, layer[i + 1] as Buffer));
      layer = next;
    }
    const hash = layer[0];
    if (!hash) throw new AivyxError('Internal', `empty tile for subtree (${level}, ${index})`);
    return hash;
  }

  /** The RFC 6962 root of this tree. */
  root(): Promise<Buffer> {
    return rangeHash(this, 0, this.#size);
  }

  /** Inclusion proof of leaf `index` (entry `index + 1`) in this tree. */
  inclusionProof(index: number): Promise<Buffer[]> {
    return inclusionProof(this, index, this.#size);
  }

  /** Consistency proof from the tree of `oldSize` entries to this one. */
  consistencyProof(oldSize: number): Promise<Buffer[]> {
    return consistencyProof(this, oldSize, this.#size);
  }

  /** The complete hashes at `base` level of one tile (fewer at the right edge of this tree). */
  #tile(base: number, tileIndex: number): Promise<Buffer[]> {
    const key = `${base}/${tileIndex}`;
    let tile = this.#tiles.get(key);
    if (!tile) {
      const from = tileIndex * TILE_WIDTH;
      const count = Math.min(TILE_WIDTH, Math.floor(this.#size / 2 ** base) - from);
      tile = base === 0 ? this.#leaves(from, count) : this.#stored(base, from, count);
      this.#tiles.set(key, tile);
    }
    return tile;
  }

  /** Leaf hashes of entries from+1 … from+count. */
  async #leaves(from: number, count: number): Promise<Buffer[]> {
    const rows = await this.#db
      .selectFrom('audit_entries')
      .select(['seq', 'idem_key', 'event', RECORDED_AT_ISO.as('at')])
      .where('seq', '>', from)
      .where('seq', '<=', from + count)
      .orderBy('seq')
      .execute();
    const out: Buffer[] = [];
    for (const r of rows) {
      const seq = Number(r.seq);
      if (seq !== from + out.length + 1) break;
      out.push(entryLeafHash(auditBody(seq, r.idem_key, r.at, r.event)));
    }
    if (out.length !== count) {
      throw new AivyxError('Audit', `entry ${from + out.length + 1} is missing from the audit log`, { hint: 'run `aivyx audit verify`' });
    }
    return out;
  }

  /** Stored subtree hashes at `level`, indices from … from+count-1. */
  async #stored(level: number, from: number, count: number): Promise<Buffer[]> {
    const rows = await this.#db
      .selectFrom('audit_tree_nodes')
      .select(['idx', 'hash'])
      .where('level', '=', level)
      .where('idx', '>=', from)
      .where('idx', '<', from + count)
      .orderBy('idx')
      .execute();
    const out: Buffer[] = [];
    for (const r of rows) {
      if (Number(r.idx) !== from + out.length) break;
      out.push(Buffer.from(r.hash));
    }
    if (out.length !== count) {
      throw new AivyxError('Audit', `tree node for ${entriesOf(level, from + out.length)} is missing`, {
        hint: 'run `aivyx audit verify`',
      });
    }
    return out;
  }
}
