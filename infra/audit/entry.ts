/**
 * The bytes of one audit entry: the MACed body, its chain MAC and its Merkle leaf (docs/AUDIT.md
 * "Entry bytes"). Everything that hashes or MACs an entry goes through here.
 */
import * as crypto from 'node:crypto';
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { hexToBytes } from '@noble/hashes/utils.js';
import { sql, type RawBuilder } from 'kysely';
import { leafHash } from './merkle.js';

/** The mac that precedes seq 1. */
export const GENESIS_MAC = '0'.repeat(64);

/**
 * The MACed body: equal to canonicalJson({ seq, idemKey, recordedAt, event }) given that
 * `eventJson` is canonical. Written by hand (keys already in RFC 8785 order: event < idemKey <
 * recordedAt < seq) so verify never re-parses and re-canonicalizes each event.
 */
export function auditBody(seq: number, idemKey: string, recordedAtIso: string, eventJson: string): string {
  return `{"event":${eventJson},"idemKey":${JSON.stringify(idemKey)},"recordedAt":${JSON.stringify(recordedAtIso)},"seq":${seq}}`;
}

/** The audit key as a Node KeyObject, imported once per key rather than once per MAC. */
const keyObjects = new WeakMap<Uint8Array, KeyObject>();

/** The KeyObject for `auditKey` (cached by identity: the keyring hands out the same array each time). */
export function auditKeyObject(auditKey: Uint8Array): KeyObject {
  let k = keyObjects.get(auditKey);
  if (k === undefined) {
    k = createSecretKey(auditKey);
    keyObjects.set(auditKey, k);
  }
  return k;
}

/**
 * Hex HMAC-SHA256(key, prevMac bytes ‖ utf8(body)). Node's (OpenSSL) HMAC here, not the pure-JS
 * one: it is the cost of every append and of `audit verify`, and several times faster.
 */
export function auditMac(auditKey: Uint8Array, prevMac: string, body: string): string {
  return createHmac('sha256', auditKeyObject(auditKey)).update(hexToBytes(prevMac)).update(body, 'utf8').digest('hex');
}

/** The entry's Merkle leaf hash: SHA-256(0x00 ‖ utf8(body)) — the leaf bytes are exactly the MACed body. */
export function entryLeafHash(body: string): Buffer {
  return leafHash(body);
}

/**
 * `recorded_at` as the ISO text JavaScript's `toISOString` gives (millisecond precision, UTC):
 * formatted by the server so bulk reads skip a Date parse and format per row.
 */
export const RECORDED_AT_ISO: RawBuilder<string> = sql<string>`to_char(recorded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Node ≥ 20.12's one-shot `crypto.hash` (absent on older Node). Asked for 'latin1' or 'hex' text:
 * on Node 20 a 'buffer' result takes a slow path that costs twice as much as the hash itself.
 */
const oneShotHash = (crypto as unknown as { hash?: (alg: string, data: Uint8Array, enc: 'latin1' | 'hex') => string }).hash;

/**
 * MACs and leaf-hashes consecutive entries for `audit verify`: the body is encoded once into a
 * reused buffer laid out as ipad-key ‖ prevMac ‖ body, so the inner HMAC hash and the leaf hash
 * (0x00 ‖ body, written over the last prevMac byte) are one-shot hashes over slices of it, and the
 * MAC just computed becomes the next entry's prevMac in place.
 */
export class EntryHasher {
  readonly #ipad = Buffer.alloc(64, 0x36);
  readonly #outer = Buffer.alloc(96, 0x5c);
  readonly #key: Uint8Array;
  #scratch = Buffer.alloc(64 * 1024);
  #prev: Buffer = Buffer.alloc(32);
  /** Hex MAC of the entry last hashed. */
  macHex = '';
  /** Leaf hash of the entry last hashed. */
  leaf: Buffer = Buffer.alloc(32);

  constructor(auditKey: Uint8Array, prevMacHex: string = GENESIS_MAC) {
    this.#key = auditKey;
    for (let i = 0; i < auditKey.length; i++) {
      this.#ipad[i] = 0x36 ^ (auditKey[i] as number);
      this.#outer[i] = 0x5c ^ (auditKey[i] as number);
    }
    this.#ipad.copy(this.#scratch, 0);
    this.#scratch.write(prevMacHex, 64, 'hex');
    this.#prev.write(prevMacHex, 'hex');
  }

  /** Sets `macHex` = HMAC(key, prevMac ‖ body) and `leaf` = SHA-256(0x00 ‖ body); the MAC becomes the next prevMac. */
  hash(body: string): void {
    if (!oneShotHash || this.#key.length > 64) {
      const mac = createHmac('sha256', auditKeyObject(this.#key)).update(this.#prev).update(body, 'utf8').digest();
      this.macHex = mac.toString('hex');
      this.#prev = mac;
      this.leaf = entryLeafHash(body);
      return;
    }
    let s = this.#scratch;
    // Room for any UTF-8 encoding of the body (≤ 3 bytes per UTF-16 unit), so a write is never cut short.
    if (body.length * 3 > s.length - 96) {
      const grown = Buffer.alloc(96 + body.length * 3);
      s.copy(grown, 0, 0, 96);
      s = this.#scratch = grown;
    }
    const end = 96 + s.write(body, 96, 'utf8');
    this.#outer.write(oneShotHash('sha256', s.subarray(0, end), 'latin1'), 64, 'latin1');
    this.macHex = oneShotHash('sha256', this.#outer, 'hex');
    s[95] = 0;
    this.leaf = Buffer.from(oneShotHash('sha256', s.subarray(95, end), 'latin1'), 'latin1');
    s.write(this.macHex, 64, 'hex');
  }
}
