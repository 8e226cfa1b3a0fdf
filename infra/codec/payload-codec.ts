/**
 * The Temporal PayloadCodec: every payload the client and worker send is serialized whole (metadata
 * included, so not even the encoding leaks) and sealed with XChaCha20-Poly1305 under the 'payload'
 * subkey. Workflow histories on the server therefore hold ciphertext only.
 */
import { randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import type { Payload, PayloadCodec } from '@temporalio/common';
// @temporalio/proto is CommonJS without statically detectable named exports: import the namespace.
import proto from '@temporalio/proto';
import { AivyxError } from '../../core/errors.js';

/** `metadata.encoding` of a payload this codec sealed. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';

/** Metadata key naming the key a payload was sealed with (so keys can be rotated later). */
export const KEY_ID_METADATA = 'encryption-key-id';

/** The key id used when none is given. */
export const DEFAULT_PAYLOAD_KEY_ID = 'payload-v1';

const NONCE_LENGTH = 24;
const TAG_LENGTH = 16;
const KEY_LENGTH = 32;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
const ProtoPayload = proto.temporal.api.common.v1.Payload;

// The key id is bound as associated data, so relabelling a payload with another id fails
// authentication instead of being decrypted under a key it was not meant for.
const aad = (keyId: string): Uint8Array => utf8.encode(`aivyx payload codec v1\0${keyId}`);

/** A codec sealing payloads under `key` and labelling them `keyId`; it opens only its own key id. */
export function createPayloadCodec(key: Uint8Array, keyId: string = DEFAULT_PAYLOAD_KEY_ID): PayloadCodec {
  if (key.length !== KEY_LENGTH) throw new AivyxError('Crypto', `payload key must be ${KEY_LENGTH} bytes, got ${key.length}`);
  if (keyId.length === 0) throw new AivyxError('Crypto', 'payload key id must not be empty');
  // Own a copy: the caller's buffer may be wiped (MasterKey.destroy) while workers still run.
  const k = Uint8Array.from(key);
  const boundAad = aad(keyId);

  const seal = (p: Payload): Payload => {
    const nonce = new Uint8Array(randomBytes(NONCE_LENGTH));
    const ciphertext = xchacha20poly1305(k, nonce, boundAad).encrypt(ProtoPayload.encode(p).finish());
    const data = new Uint8Array(NONCE_LENGTH + ciphertext.length);
    data.set(nonce, 0);
    data.set(ciphertext, NONCE_LENGTH);
    return { metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(keyId) }, data };
  };

  const open = (p: Payload): Payload => {
    const encoding = p.metadata?.encoding;
    // Not ours (e.g. written before encryption was enabled, or by another tool): hand it on unchanged.
    if (!encoding || fromUtf8.decode(encoding) !== ENCRYPTED_ENCODING) return p;
    const idBytes = p.metadata?.[KEY_ID_METADATA];
    if (!idBytes || idBytes.length === 0) {
      throw new AivyxError('Crypto', `encrypted payload has no "${KEY_ID_METADATA}" metadata; cannot tell which key sealed it`, {
        hint: 'the payload was not written by the aivyx codec or its metadata was stripped',
      });
    }
    const id = fromUtf8.decode(idBytes);
    if (id !== keyId) {
      throw new AivyxError('Crypto', `encrypted payload names key id "${id}", but this process holds only "${keyId}"`, {
        hint: 'start aivyx with the passphrase (and key version) that wrote this history',
        detail: { keyId: id, expected: keyId },
      });
    }
    const data = p.data ?? new Uint8Array();
    if (data.length < NONCE_LENGTH + TAG_LENGTH) throw new AivyxError('Crypto', `encrypted payload is truncated (${data.length} bytes)`);
    let plaintext: Uint8Array;
    try {
      plaintext = xchacha20poly1305(k, data.subarray(0, NONCE_LENGTH), boundAad).decrypt(data.subarray(NONCE_LENGTH));
    } catch (cause) {
      throw new AivyxError('Crypto', `encrypted payload failed authentication under key id "${keyId}" (tampered, or sealed with another key)`, {
        hint: 'a wrong passphrase gives a different payload key; otherwise the history was modified',
        cause,
      });
    }
    const inner = ProtoPayload.decode(plaintext);
    return { metadata: { ...inner.metadata }, data: inner.data };
  };

  return {
    async encode(payloads) {
      return payloads.map(seal);
    },
    async decode(payloads) {
      return payloads.map(open);
    },
  };
}
