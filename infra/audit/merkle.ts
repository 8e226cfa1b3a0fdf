/**
 * RFC 6962 / RFC 9162 Merkle tree hashing (as in C2SP tlog-tiles): leaf = SHA-256(0x00 ‖ leaf
 * bytes), node = SHA-256(0x01 ‖ left ‖ right), and the empty tree's root is SHA-256 of nothing.
 * Pure: the proofs are built over any `SubtreeSource`, so the database is one source among others.
 */
import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import { AivyxError } from '../../core/errors.js';

/** Bytes in every hash of the tree. */
export const HASH_SIZE = 32;

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

/** Node ≥ 20.12's one-shot `crypto.hash` (absent on older Node); 'latin1' text is its fast path on Node 20. */
const oneShotHash = (crypto as unknown as { hash?: (alg: string, data: Uint8Array | string, enc: 'latin1') => string }).hash;
/** 0x01 ‖ left ‖ right, reused by every `nodeHash` call (synchronous, so never shared mid-use). */
const nodeInput = Buffer.alloc(1 + 2 * HASH_SIZE, 1);

/** SHA-256(0x00 ‖ bytes): the hash of one leaf (a string is hashed as its UTF-8 bytes). */
export function leafHash(bytes: Uint8Array | string): Buffer {
  // U+0000 encodes as the single byte 0x00.
  if (oneShotHash && typeof bytes === 'string') return Buffer.from(oneShotHash('sha256', `\u0000${bytes}`, 'latin1'), 'latin1');
  return createHash('sha256').update(LEAF_PREFIX).update(bytes).digest();
}

/** SHA-256(0x01 ‖ left ‖ right): an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (!oneShotHash || left.length !== HASH_SIZE || right.length !== HASH_SIZE) {
    return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
  }
  nodeInput.set(left, 1);
  nodeInput.set(right, 1 + HASH_SIZE);
  return Buffer.from(oneShotHash('sha256', nodeInput, 'latin1'), 'latin1');
}

/** The root of the empty tree. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** The largest power of two strictly below `n` (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** 2^level as a number (sizes stay below 2^53, where bit operators would overflow at 2^31). */
function pow2(level: number): number {
  return 2 ** level;
}

/** A complete subtree just formed by `Frontier.append`: level ≥ 1, index counted at that level. */
export type NodeSink = (level: number, index: number, hash: Buffer) => void;

/**
 * The right edge of a tree (a "compact range" from 0): the roots of its complete subtrees,
 * largest first, one per set bit of `size`. Appending a leaf folds equal-sized neighbours;
 * the root folds the rest from the right. This is all an appender needs to carry.
 */
export class Frontier {
  #size: number;
  readonly #hashes: Buffer[];

  private constructor(size: number, hashes: Buffer[]) {
    this.#size = size;
    this.#hashes = hashes;
  }

  /** The frontier of the empty tree. */
  static empty(): Frontier {
    return new Frontier(0, []);
  }

  /** Decodes `size` and the concatenated subtree roots as stored; throws Audit when they disagree. */
  static decode(size: number, bytes: Uint8Array): Frontier {
    const want = popcount(size) * HASH_SIZE;
    if (bytes.length !== want) {
      throw new AivyxError(
        'Audit',
        `the stored tree edge holds ${bytes.length / HASH_SIZE} subtree roots but a tree of ${size} entries has ${want / HASH_SIZE}`,
        {
          hint: 'audit_head was changed outside aivyx; run `aivyx audit verify`',
        },
      );
    }
    const hashes: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += HASH_SIZE) hashes.push(Buffer.from(bytes.subarray(i, i + HASH_SIZE)));
    return new Frontier(size, hashes);
  }

  /** Number of leaves. */
  get size(): number {
    return this.#size;
  }

  /** The concatenated subtree roots, largest first (what `decode` reads back). */
  encode(): Buffer {
    return Buffer.concat(this.#hashes);
  }

  /** An independent copy (a batch plans on a copy and keeps it only if the commit succeeds). */
  clone(): Frontier {
    return new Frontier(this.#size, [...this.#hashes]);
  }

  /** Appends one leaf hash; `onNode` hears every complete subtree of level ≥ 1 it completes. */
  append(leaf: Buffer, onNode?: NodeSink): void {
    let hash = leaf;
    let level = 0;
    let n = this.#size;
    while (n % 2 === 1) {
      const left = this.#hashes.pop();
      if (!left) throw new AivyxError('Internal', 'frontier underflow');
      hash = nodeHash(left, hash);
      level++;
      n = (n - 1) / 2;
      onNode?.(level, (this.#size + 1) / pow2(level) - 1, hash);
    }
    this.#hashes.push(hash);
    this.#size++;
  }

  /** The RFC 6962 root of the tree so far. */
  root(): Buffer {
    const last = this.#hashes.length - 1;
    if (last < 0) return EMPTY_ROOT;
    let hash = this.#hashes[last] as Buffer;
    for (let i = last - 1; i >= 0; i--) hash = nodeHash(this.#hashes[i] as Buffer, hash);
    return hash;
  }
}

/** Number of set bits of a non-negative integer below 2^53. */
function popcount(n: number): number {
  let c = 0;
  for (let x = n; x > 0; x = Math.floor(x / 2)) c += x % 2;
  return c;
}

/** Where proofs get the hash of a complete, aligned subtree: `2^level` leaves from `index · 2^level`. */
export interface SubtreeSource {
  node(level: number, index: number): Promise<Buffer>;
}

/** Exact base-2 logarithm of a power of two, else -1. */
function log2Exact(n: number): number {
  let level = 0;
  for (let x = n; x > 1; x /= 2) {
    if (x % 2 !== 0) return -1;
    level++;
  }
  return level;
}

/** MTH(D[start:end]) as RFC 9162 defines it, from the complete subtrees of the source. */
export async function rangeHash(source: SubtreeSource, start: number, end: number): Promise<Buffer> {
  const n = end - start;
  if (n <= 0) return EMPTY_ROOT;
  const level = log2Exact(n);
  if (level >= 0 && start % n === 0) return source.node(level, start / n);
  const k = splitPoint(n);
  return nodeHash(await rangeHash(source, start, start + k), await rangeHash(source, start + k, end));
}

/** RFC 9162 §2.1.3.1 PATH(index, D[0:size]): sibling hashes from the leaf up. */
export async function inclusionProof(source: SubtreeSource, index: number, size: number): Promise<Buffer[]> {
  if (!(index >= 0 && index < size)) throw new AivyxError('NotFound', `leaf ${index} is not in a tree of ${size} leaves`);
  const path: Buffer[] = [];
  let start = 0;
  let end = size;
  // Walk down, collecting the sibling of each half we descend into; the list is reversed at the end.
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      path.push(await rangeHash(source, start + k, end));
      end = start + k;
    } else {
      path.push(await rangeHash(source, start, start + k));
      start += k;
    }
  }
  return path.reverse();
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[0:n]): that the tree of `oldSize` leaves is a prefix of the tree of `newSize`. */
export async function consistencyProof(source: SubtreeSource, oldSize: number, newSize: number): Promise<Buffer[]> {
  if (!(oldSize >= 0 && oldSize <= newSize))
    throw new AivyxError('Audit', `no consistency proof from size ${oldSize} to the smaller size ${newSize}`);
  if (oldSize === 0 || oldSize === newSize) return [];
  const proof: Buffer[] = [];
  let m = oldSize;
  let start = 0;
  let end = newSize;
  let whole = true;
  // SUBPROOF(m, D[start:end], whole), unrolled; siblings are collected top-down and reversed.
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      proof.push(await rangeHash(source, start + k, end));
      end = start + k;
    } else {
      proof.push(await rangeHash(source, start, start + k));
      m -= k;
      start += k;
      whole = false;
    }
  }
  if (!whole) proof.push(await rangeHash(source, start, end));
  return proof.reverse();
}

/** RFC 9162 §2.1.3.2: the root an inclusion proof leads to for `leaf` at `index` of `size`. */
export function rootFromInclusion(leaf: Buffer, index: number, size: number, proof: readonly Buffer[]): Buffer | undefined {
  if (!(index >= 0 && index < size)) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

/** RFC 9162 §2.1.4.2: whether `proof` shows the tree (oldSize, oldRoot) is a prefix of (newSize, newRoot). */
export function checkConsistency(oldSize: number, oldRoot: Buffer, newSize: number, newRoot: Buffer, proof: readonly Buffer[]): boolean {
  if (oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && oldRoot.equals(newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  let path = [...proof];
  if (log2Exact(oldSize) >= 0) path = [oldRoot, ...path];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  const [first, ...rest] = path;
  if (!first) return false;
  let fr = first;
  let sr = first;
  for (const c of rest) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(oldRoot) && sr.equals(newRoot);
}
