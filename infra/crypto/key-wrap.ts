/**
 * Wrapping the master key under a passphrase's key (XChaCha20-Poly1305, a fixed label as additional
 * data): what lets the passphrase change without re-sealing anything. A wrong passphrase gives a key
 * under which the wrapped bytes do not authenticate, which is how it is recognised.
 */
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { randomBytes } from '@noble/ciphers/utils.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

const AAD = utf8ToBytes('aivyx-wrapped-master-key-v1');
const NONCE_LENGTH = 24;

/** `key` sealed under `kek`: hex of a fresh nonce ‖ ciphertext ‖ tag. */
export function wrapKey(kek: Uint8Array, key: Uint8Array): string {
  const nonce = randomBytes(NONCE_LENGTH);
  const sealed = xchacha20poly1305(kek, nonce, AAD).encrypt(key);
  return bytesToHex(nonce) + bytesToHex(sealed);
}

/** The key wrapped in `wrapped`, or undefined when it does not open under `kek` (a wrong passphrase, or altered). */
export function unwrapKey(kek: Uint8Array, wrapped: string): Uint8Array | undefined {
  try {
    const bytes = hexToBytes(wrapped);
    return xchacha20poly1305(kek, bytes.subarray(0, NONCE_LENGTH), AAD).decrypt(bytes.subarray(NONCE_LENGTH));
  } catch {
    return undefined;
  }
}
