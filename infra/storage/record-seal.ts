/**
 * Seals and opens one record with XChaCha20-Poly1305. The additional data binds the domain,
 * the key and the key-schedule version, so a row copied to another key or domain, or
 * relabelled with another version, fails authentication instead of decrypting.
 */
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { randomBytes } from '@noble/ciphers/utils.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { AivyxError } from '../../core/errors.js';

/** XChaCha20 nonce length: 24 bytes, large enough to pick at random for every write. */
export const NONCE_LENGTH = 24;
/** Poly1305 tag length appended to every ciphertext. */
export const TAG_LENGTH = 16;

const AAD_LABEL = utf8ToBytes('aivyx-sealed-record');

/** AAD = "aivyx-sealed-record" 0x00 ‖ u32be(version) ‖ u32be(|domain|) ‖ domain ‖ u32be(|key|) ‖ key (UTF-8). */
export function recordAad(domain: string, key: string, version: number): Uint8Array {
  const d = utf8ToBytes(domain);
  const k = utf8ToBytes(key);
  // Length prefixes make the encoding injective: ("a", "b/c") and ("a/b", "c") differ.
  const out = new Uint8Array(AAD_LABEL.length + 1 + 4 + 4 + d.length + 4 + k.length);
  const view = new DataView(out.buffer);
  let at = 0;
  out.set(AAD_LABEL, at);
  at += AAD_LABEL.length + 1;
  view.setUint32(at, version);
  at += 4;
  view.setUint32(at, d.length);
  out.set(d, at + 4);
  at += 4 + d.length;
  view.setUint32(at, k.length);
  out.set(k, at + 4);
  return out;
}

/** A sealed record as stored. */
export interface SealedBox {
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

/** Encrypts `plaintext` under `subkey` with a fresh random nonce. */
export function sealRecord(subkey: Uint8Array, domain: string, key: string, version: number, plaintext: Uint8Array): SealedBox {
  const nonce = randomBytes(NONCE_LENGTH);
  const ciphertext = xchacha20poly1305(subkey, nonce, recordAad(domain, key, version)).encrypt(plaintext);
  return { nonce, ciphertext };
}

/** Decrypts a stored record; throws Crypto naming domain and key when it does not authenticate. */
export function openRecord(subkey: Uint8Array, domain: string, key: string, version: number, box: SealedBox): Uint8Array {
  const fail = (why: string, cause?: unknown): AivyxError =>
    new AivyxError('Crypto', `sealed record ${domain}/${key} does not open: ${why}`, {
      cause,
      detail: { domain, key, version },
      hint: 'the row was altered, truncated, or copied from another key or domain; it was not overwritten — restore it from a backup or delete it',
    });
  if (box.nonce.length !== NONCE_LENGTH) throw fail(`nonce is ${box.nonce.length} bytes, expected ${NONCE_LENGTH}`);
  if (box.ciphertext.length < TAG_LENGTH)
    throw fail(`ciphertext is ${box.ciphertext.length} bytes, shorter than the ${TAG_LENGTH}-byte tag`);
  try {
    return xchacha20poly1305(subkey, toPlain(box.nonce), recordAad(domain, key, version)).decrypt(toPlain(box.ciphertext));
  } catch (cause) {
    throw fail('authentication failed', cause);
  }
}

/** pg returns Buffers for bytea; hand noble a plain Uint8Array view of the same bytes. */
export function toPlain(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
