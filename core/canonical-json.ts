/**
 * Canonical JSON (RFC 8785) and the small hash/MAC helpers built on it. Everything that is
 * hashed or MACed goes through `canonicalJson` so two processes always agree on the bytes.
 */
import canonicalizeModule from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { hmac } from '@noble/hashes/hmac.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { AivyxError } from './errors.js';

type Serialize = (input: unknown) => string | undefined;
// canonicalize is CommonJS (`module.exports = fn`) with an ESM-style `export default` typing:
// Node hands us the function itself, TypeScript believes in `{ default: fn }`. Accept both.
const canonicalize: Serialize =
  typeof canonicalizeModule === 'function'
    ? (canonicalizeModule as unknown as Serialize)
    : (canonicalizeModule as unknown as { default: Serialize }).default;

/** RFC 8785 canonical JSON of `value`; throws AivyxError Internal when `value` has no JSON form. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) {
    throw new AivyxError('Internal', 'cannot canonicalize undefined: it has no JSON form');
  }
  let out: string | undefined;
  try {
    out = canonicalize(value);
  } catch (cause) {
    // NaN/Infinity (RFC 8785 forbids them), BigInt, cycles.
    throw new AivyxError('Internal', `cannot canonicalize value: ${(cause as Error).message}`, { cause });
  }
  // Functions and symbols at top level serialize to undefined: refuse rather than hash "undefined".
  if (typeof out !== 'string') {
    throw new AivyxError('Internal', `cannot canonicalize a value of type ${typeof value}`);
  }
  return out;
}

/** Bytes of `data`: strings are UTF-8 encoded. */
function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? utf8ToBytes(data) : data;
}

/** Lower-case hex SHA-256 of `data` (strings as UTF-8). */
export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(sha256(toBytes(data)));
}

/** SHA-256 of the canonical JSON of a tool input: what the audit log and the proofs keep instead of the input. */
export function inputHash(input: unknown): string {
  return sha256Hex(canonicalJson(input ?? null));
}

/** The SHA-256 of a person's text (the audit log keeps no user text). */
export function textHash(text: string): string {
  return inputHash(text);
}

/** Lower-case hex HMAC-SHA256 of `data` under `key` (strings as UTF-8). */
export function hmacSha256Hex(key: Uint8Array, data: string | Uint8Array): string {
  return bytesToHex(hmac(sha256, key, toBytes(data)));
}

/**
 * Constant-time comparison of two hex strings (case-insensitive). Lengths are not secret:
 * different lengths return false at once; malformed hex returns false.
 */
export function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let x: Uint8Array;
  let y: Uint8Array;
  try {
    x = hexToBytes(a);
    y = hexToBytes(b);
  } catch {
    return false;
  }
  return timingSafeEqualBytes(x, y);
}

/** Constant-time comparison of two byte arrays (length is not secret). */
export function timingSafeEqualBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
