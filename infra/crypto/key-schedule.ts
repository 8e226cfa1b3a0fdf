/**
 * The seed's Deliverable 7 key schedule: passphrase --Argon2id--> master key (or, once the passphrase
 * has changed, the key that unwraps it: infra/keyring.ts)
 * --HKDF-SHA256(salt = versioned label, info = domain)--> 32-byte domain subkeys.
 * The master key never leaves this module's `MasterKey` holder; callers get subkeys.
 */
import { argon2idAsync } from '@noble/hashes/argon2.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { AivyxError } from '../../core/errors.js';
import { wrapKey } from './key-wrap.js';

/**
 * HKDF domains. The seed's five (sessions, memory, audit, secrets, channel_state) plus ours:
 * 'attestation' keys the channel attestation MACs on turn requests (BRIEF §5), 'payload' keys the
 * Temporal PayloadCodec so workflow histories hold no plaintext, and 'audit_checkpoint' is the
 * Ed25519 seed that signs the audit log's checkpoints (docs/AUDIT.md); 'stream' seals the stream events
 * that travel between processes over PostgreSQL NOTIFY (infra/stream-bus.ts).
 */
export type KeyDomain =
  'sessions' | 'memory' | 'audit' | 'secrets' | 'channel_state' | 'config' | 'attestation' | 'payload' | 'audit_checkpoint' | 'stream';

/** Every KeyDomain, in a stable order (for tests and docs). */
export const KEY_DOMAINS: readonly KeyDomain[] = [
  'sessions',
  'memory',
  'audit',
  'secrets',
  'channel_state',
  'config',
  'attestation',
  'payload',
  'audit_checkpoint',
  'stream',
];

/** Argon2id cost parameters: `m` memory in KiB, `t` iterations, `p` lanes. */
export interface KdfParams {
  m: number;
  t: number;
  p: number;
}

/** The seed's starting parameters: 64 MiB, 3 passes, 4 lanes. */
export const DEFAULT_KDF_PARAMS: Readonly<KdfParams> = Object.freeze({ m: 65536, t: 3, p: 4 });

/** The versioned HKDF salt; bumping it to v2 yields entirely new subkeys from the same master. */
export const KEY_SCHEDULE_VERSION = 'aivyx-v1-storage';

/** Length of the master key and every subkey (XChaCha20-Poly1305 / HMAC-SHA256 key size). */
export const KEY_LENGTH = 32;

// The KCV subkey uses an info string that is not a KeyDomain, so the check value stored in
// the database reveals nothing about any key actually used for data.
const KCV_INFO = 'key-check';
const KCV_LABEL = 'aivyx key check value v1';
// Likewise for the install identity: its own info string, so the public fingerprint is unrelated to every data key.
const INSTALL_ID_INFO = 'install-identity';
const INSTALL_ID_LABEL = 'aivyx install identity v1';

/** Validates Argon2id parameters; throws Config on nonsense (e.g. a hand-edited install row). */
export function assertKdfParams(params: KdfParams): void {
  const ok =
    Number.isInteger(params.m) &&
    Number.isInteger(params.t) &&
    Number.isInteger(params.p) &&
    params.p >= 1 &&
    params.p <= 255 &&
    params.t >= 1 &&
    params.m >= 8 * params.p &&
    params.m <= 4 * 1024 * 1024;
  if (!ok) {
    throw new AivyxError('Config', `invalid Argon2id parameters ${JSON.stringify(params)}`, {
      hint: 'm (KiB) must be ≥ 8·p and ≤ 4 GiB, t ≥ 1, 1 ≤ p ≤ 255',
    });
  }
}

/** Argon2id(passphrase, salt) → 32-byte master key; async so it yields to the event loop. */
export async function deriveMasterKey(passphrase: string, salt: Uint8Array, params: KdfParams): Promise<Uint8Array> {
  if (passphrase.length === 0) {
    throw new AivyxError('Config', 'empty passphrase', { hint: 'set AIVYX_PASSPHRASE, AIVYX_PASSPHRASE_FILE or enter one at the prompt' });
  }
  assertKdfParams(params);
  if (salt.length < 8) throw new AivyxError('Crypto', 'Argon2id salt must be at least 8 bytes');
  try {
    return await argon2idAsync(passphrase, salt, {
      m: params.m,
      t: params.t,
      p: params.p,
      dkLen: KEY_LENGTH,
      // noble defaults maxmem to 1 GiB; allow exactly what the parameters ask for (+ slack).
      maxmem: params.m * 1024 + 1024 * 1024,
    });
  } catch (cause) {
    throw new AivyxError('Crypto', `Argon2id failed: ${(cause as Error).message}`, { cause });
  }
}

/** HKDF-SHA256(ikm = master, salt = version, info = domain) → 32-byte subkey. */
export function deriveSubkey(master: Uint8Array, domain: KeyDomain, version: string = KEY_SCHEDULE_VERSION): Uint8Array {
  return hkdfInfo(master, domain, version);
}

/** HKDF with an arbitrary info label (internal: KeyDomain-typed callers use deriveSubkey). */
function hkdfInfo(master: Uint8Array, info: string, version: string): Uint8Array {
  if (master.length !== KEY_LENGTH) throw new AivyxError('Crypto', `master key must be ${KEY_LENGTH} bytes`);
  return hkdf(sha256, master, utf8ToBytes(version), utf8ToBytes(info), KEY_LENGTH);
}

/** Hex key-check value of a master key: HMAC(HKDF(master, info 'key-check'), fixed label). */
export function keyCheckValue(master: Uint8Array, version: string = KEY_SCHEDULE_VERSION): string {
  const kcvKey = hkdfInfo(master, KCV_INFO, version);
  const out = bytesToHex(hmac(sha256, kcvKey, utf8ToBytes(KCV_LABEL)));
  kcvKey.fill(0);
  return out;
}

/**
 * The install's public identity: 16 hex digits of HMAC(HKDF(master, info 'install-identity'), fixed
 * label) under the v1 schedule, so it survives a passphrase change (same master key) and a storage
 * key rotation (a new schedule version re-seals rows, not this). It names the install's task queues and
 * marks the Temporal namespace it owns (infra/temporal/install-marker.ts); it reveals nothing of any key.
 */
export function installIdOf(master: Uint8Array): string {
  const key = hkdfInfo(master, INSTALL_ID_INFO, KEY_SCHEDULE_VERSION);
  const out = bytesToHex(hmac(sha256, key, utf8ToBytes(INSTALL_ID_LABEL))).slice(0, 16);
  key.fill(0);
  return out;
}

/**
 * Holds the master key for the life of a process and hands out cached domain subkeys.
 * Passed to composition roots instead of the passphrase (seed D7 change 2).
 */
export class MasterKey {
  readonly #master: Uint8Array;
  readonly #version: string;
  readonly #cache = new Map<KeyDomain, Uint8Array>();

  constructor(master: Uint8Array, version: string = KEY_SCHEDULE_VERSION) {
    if (master.length !== KEY_LENGTH) throw new AivyxError('Crypto', `master key must be ${KEY_LENGTH} bytes`);
    // Own a copy so the caller may wipe its buffer.
    this.#master = Uint8Array.from(master);
    this.#version = version;
  }

  /** The 32-byte subkey for `domain` (derived once, then cached). Do not mutate it. */
  subkey(domain: KeyDomain): Uint8Array {
    let k = this.#cache.get(domain);
    if (k === undefined) {
      k = deriveSubkey(this.#master, domain, this.#version);
      this.#cache.set(domain, k);
    }
    return k;
  }

  /** The same master key under another key-schedule version (key rotation reads old and new rows). */
  atVersion(version: string): MasterKey {
    return new MasterKey(this.#master, version);
  }

  /** This master key wrapped under `kek` (a new passphrase's key), for the install row. */
  wrappedUnder(kek: Uint8Array): string {
    return wrapKey(kek, this.#master);
  }

  /** Hex key-check value stored in the install row to recognise the right passphrase. */
  keyCheckValue(): string {
    return keyCheckValue(this.#master, this.#version);
  }

  /** The install's public identity ({@link installIdOf}). */
  installId(): string {
    return installIdOf(this.#master);
  }

  /** Best-effort wipe of the master and cached subkeys (JS cannot guarantee no copies). */
  destroy(): void {
    this.#master.fill(0);
    for (const k of this.#cache.values()) k.fill(0);
    this.#cache.clear();
  }

  /** Keeps key bytes out of logs and `console.log`. */
  toJSON(): string {
    return '[MasterKey]';
  }
}
