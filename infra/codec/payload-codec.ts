/**
 * The Temporal PayloadCodec: every payload the client and worker send is serialized whole (metadata
 * included, so not even the encoding leaks) and sealed with XChaCha20-Poly1305 under the 'payload'
 * subkey. Workflow histories on the server therefore hold ciphertext only.
 *
 * Each payload is also bound to the workflow it was written for (namespace + workflow id from the
 * SDK's serialization context, authenticated as associated data and named in clear metadata so the
 * codec server can still open it for the UI). A ciphertext copied out of one workflow's history and
 * sent to another workflow — as its input, an Update's argument or a forged activity completion —
 * fails to open there. The worker's codec also refuses payloads that are not encrypted at all: it
 * hands the workflow a *refusal marker* instead (see `core/refused-payload.ts`), which the workflow
 * interceptors turn into a clean `Crypto` failure, never a workflow task retried forever.
 */
import { randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
// @temporalio/proto is CommonJS without statically detectable named exports: import the namespace.
import proto from '@temporalio/proto';
import { AivyxError } from '../../core/errors.js';
import { REFUSED_PAYLOAD_KEY } from '../../core/refused-payload.js';

/** `metadata.encoding` of a payload this codec sealed. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';

/** Metadata key naming the key a payload was sealed with (so keys can be rotated later). */
export const KEY_ID_METADATA = 'encryption-key-id';

/** Metadata key naming the workflow a payload is bound to (`<namespace>\n<workflow id>`, empty when unbound). */
export const BINDING_METADATA = 'aivyx-binding';

/** The key id used when none is given. */
export const DEFAULT_PAYLOAD_KEY_ID = 'payload-v1';

/**
 * What the codec does with an inbound payload that is not encrypted (or not bound to where it
 * arrives): `refuse` hands on a refusal marker (the worker), `reject` throws a Crypto error (clients),
 * `pass` hands it on unchanged (the codec server, which only displays).
 */
export type UnencryptedPolicy = 'refuse' | 'reject' | 'pass';

/** Options of `createPayloadCodec`. */
export interface PayloadCodecOptions {
  keyId?: string;
  /** Default `reject`. */
  unencrypted?: UnencryptedPolicy;
}

const NONCE_LENGTH = 24;
const TAG_LENGTH = 16;
const KEY_LENGTH = 32;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
const ProtoPayload = proto.temporal.api.common.v1.Payload;
// A payload that carries no data at all (an absent value): nothing to hide or forge.
const NULL_ENCODING = 'binary/null';
// A scheduled run's workflow id is the schedule action's id plus `-<RFC 3339 instant>`.
const SCHEDULED_RUN = /^-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

// The key id and the binding are associated data, so relabelling a payload with another key id or
// moving it to another workflow fails authentication instead of being decrypted.
const aad = (keyId: string, binding: string): Uint8Array => utf8.encode(`aivyx payload codec v2\0${keyId}\0${binding}`);

/** Associated data of the v1 format (no binding): still opened for display by the codec server. */
const V1_AAD = (keyId: string): Uint8Array => utf8.encode(`aivyx payload codec v1\0${keyId}`);

/** The binding of a serialization context (empty without one). */
function bindingOf(context: SerializationContext | undefined): string {
  return context ? `${context.namespace}\n${context.workflowId ?? ''}` : '';
}

/** True when a payload bound to `bound` may be opened where `context` says it arrived. */
function bindingFits(bound: string, context: SerializationContext | undefined): boolean {
  // Without a context (the codec server, direct use) the metadata alone says where it belongs.
  if (!context) return true;
  const here = bindingOf(context);
  return bound === here || (here.startsWith(`${bound}-`) && SCHEDULED_RUN.test(here.slice(bound.length)));
}

/** A codec sealing payloads under `key`; it opens only its own key id. */
export function createPayloadCodec(key: Uint8Array, options: string | PayloadCodecOptions = {}): PayloadCodec {
  const opts: PayloadCodecOptions = typeof options === 'string' ? { keyId: options } : options;
  const keyId = opts.keyId ?? DEFAULT_PAYLOAD_KEY_ID;
  const policy = opts.unencrypted ?? 'reject';
  if (key.length !== KEY_LENGTH) throw new AivyxError('Crypto', `payload key must be ${KEY_LENGTH} bytes, got ${key.length}`);
  if (keyId.length === 0) throw new AivyxError('Crypto', 'payload key id must not be empty');
  // Own a copy: the caller's buffer may be wiped (MasterKey.destroy) while workers still run.
  const k = Uint8Array.from(key);

  const seal = (p: Payload, binding: string): Payload => {
    const nonce = new Uint8Array(randomBytes(NONCE_LENGTH));
    const ciphertext = xchacha20poly1305(k, nonce, aad(keyId, binding)).encrypt(ProtoPayload.encode(p).finish());
    const data = new Uint8Array(NONCE_LENGTH + ciphertext.length);
    data.set(nonce, 0);
    data.set(ciphertext, NONCE_LENGTH);
    return {
      metadata: {
        encoding: utf8.encode(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: utf8.encode(keyId),
        [BINDING_METADATA]: utf8.encode(binding),
      },
      data,
    };
  };

  /** What to hand on for a payload this codec will not open (see `UnencryptedPolicy`). */
  const refused = (p: Payload, reason: string): Payload => {
    if (policy === 'pass') return p;
    if (policy === 'reject')
      throw new AivyxError('Crypto', `refused a payload: ${reason}`, {
        hint: 'only aivyx clients holding the payload key can send to aivyx workflows',
      });
    return { metadata: { encoding: utf8.encode('json/plain') }, data: utf8.encode(JSON.stringify({ [REFUSED_PAYLOAD_KEY]: reason })) };
  };

  /**
   * Opens `p`, or hands on what the policy says for a payload this codec will not open: not
   * encrypted, bound elsewhere, or one it cannot authenticate (another key, tampered). On a worker
   * every such payload becomes a refusal, never a decode error that fails workflow tasks forever.
   */
  const decodeOne = (p: Payload, context: SerializationContext | undefined): Payload => {
    try {
      return open(p, context);
    } catch (e) {
      if (policy === 'refuse' && e instanceof AivyxError) return refused(p, e.message);
      throw e;
    }
  };

  const open = (p: Payload, context: SerializationContext | undefined): Payload => {
    const encoding = p.metadata?.encoding ? fromUtf8.decode(p.metadata.encoding) : undefined;
    if (encoding === NULL_ENCODING) return p;
    if (encoding !== ENCRYPTED_ENCODING) return refused(p, `it is not encrypted (${encoding ?? 'no encoding'})`);
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
    const boundBytes = p.metadata?.[BINDING_METADATA];
    // A payload sealed before bindings existed (format v1) can only be displayed, never acted on.
    if (!boundBytes && policy !== 'pass') return refused(p, 'it was sealed without a workflow binding (an older format)');
    const bound = boundBytes ? fromUtf8.decode(boundBytes) : undefined;
    if (bound !== undefined && !bindingFits(bound, context))
      return refused(
        p,
        `it was written for workflow "${bound.split('\n')[1] ?? ''}", not "${context?.workflowId ?? ''}" (a copied payload)`,
      );
    const data = p.data ?? new Uint8Array();
    if (data.length < NONCE_LENGTH + TAG_LENGTH) throw new AivyxError('Crypto', `encrypted payload is truncated (${data.length} bytes)`);
    let plaintext: Uint8Array;
    try {
      plaintext = xchacha20poly1305(k, data.subarray(0, NONCE_LENGTH), bound === undefined ? V1_AAD(keyId) : aad(keyId, bound)).decrypt(
        data.subarray(NONCE_LENGTH),
      );
    } catch (cause) {
      throw new AivyxError(
        'Crypto',
        `encrypted payload failed authentication under key id "${keyId}" (tampered, or sealed with another key)`,
        {
          hint: 'a wrong passphrase gives a different payload key; otherwise the history was modified',
          cause,
        },
      );
    }
    const inner = ProtoPayload.decode(plaintext);
    return { metadata: { ...inner.metadata }, data: inner.data };
  };

  return {
    async encode(payloads, context) {
      const binding = bindingOf(context);
      return payloads.map((p) => seal(p, binding));
    },
    async decode(payloads, context) {
      return payloads.map((p) => decodeOne(p, context));
    },
  };
}
