/**
 * Which subkeys sealed storage may use. Rotation needs subkeys of more than one key-schedule
 * version from the same master key: a `StorageKeyring` derives each version from the v1
 * `MasterKey` on demand, so a process reads old and new rows alike during and after a rotation.
 */
import type { Kysely } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import { timingSafeEqualHex } from '../../core/canonical-json.js';
import { KEY_SCHEDULE_VERSION, MasterKey, type KeyDomain } from '../crypto/key-schedule.js';
import type { Database } from '../db/database.js';
import { openKeyring, type OpenKeyringOptions } from '../keyring.js';

/** The HKDF salt of key-schedule version `n`: 1 → 'aivyx-v1-storage', 2 → 'aivyx-v2-storage'. */
export function storageVersionLabel(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new AivyxError('Storage', `invalid key-schedule version ${n}`);
  return `aivyx-v${n}-storage`;
}

/** A source of domain subkeys by key-schedule version number. */
export interface StorageKeys {
  /** The 32-byte subkey of `domain` under version `version`; throws Config if this source lacks it. */
  subkey(domain: KeyDomain, version: number): Uint8Array;
  /** The v1 `MasterKey` (audit, attestation, payload and the install row's KCV all use v1). */
  readonly master: MasterKey;
}

// The install row's KCV is always the v1 one: rotation re-seals rows, never the install row,
// so the same passphrase keeps unlocking the install before, during and after a rotation.
if (KEY_SCHEDULE_VERSION !== storageVersionLabel(1)) throw new Error('KEY_SCHEDULE_VERSION is expected to be version 1');

/** Subkeys of every key-schedule version, derived from one master key (cached per version). */
export class StorageKeyring implements StorageKeys {
  readonly #byVersion = new Map<number, MasterKey>();
  /** The v1 master key, for code that only needs the current schedule. */
  readonly master: MasterKey;

  /** Wraps a v1 master key (or raw master key bytes, copied). */
  constructor(master: MasterKey | Uint8Array) {
    this.master = master instanceof MasterKey ? master : new MasterKey(master);
    this.#byVersion.set(1, this.master);
  }

  /** The subkey of `domain` under version `version`. */
  subkey(domain: KeyDomain, version: number): Uint8Array {
    let mk = this.#byVersion.get(version);
    if (mk === undefined) {
      mk = this.master.atVersion(storageVersionLabel(version));
      this.#byVersion.set(version, mk);
    }
    return mk.subkey(domain);
  }

  /** Best-effort wipe of the master key and every derived subkey. */
  destroy(): void {
    for (const mk of this.#byVersion.values()) mk.destroy();
    this.#byVersion.clear();
  }

  /** Keeps key bytes out of logs. */
  toJSON(): string {
    return '[StorageKeyring]';
  }
}

/** Turns whatever `SealedStorage.open` was given into a `StorageKeys` that reads every version. */
export function toStorageKeys(keys: MasterKey | StorageKeys): StorageKeys {
  return keys instanceof MasterKey ? new StorageKeyring(keys) : keys;
}

/** `openKeyring` (first run creates the install; a wrong passphrase writes nothing) as a `StorageKeyring`. */
export async function unlockStorageKeyring(
  db: Kysely<Database>,
  passphrase: string,
  opts: OpenKeyringOptions = {},
): Promise<StorageKeyring> {
  return new StorageKeyring(await openKeyring(db, passphrase, opts));
}

/** Throws Crypto (wrong passphrase) unless `keys` belongs to this install; reads only. */
export async function assertKeysMatchInstall(db: Kysely<Database>, keys: StorageKeys): Promise<void> {
  const row = await db.selectFrom('install').select('kcv').where('id', '=', 1).executeTakeFirst();
  if (!row)
    throw new AivyxError('Storage', 'no install row: this database was never unlocked', { hint: 'start aivyx once to create the install' });
  if (!timingSafeEqualHex(keys.master.keyCheckValue(), row.kcv)) {
    throw new AivyxError('Crypto', 'wrong passphrase: it does not unlock this aivyx install', {
      hint: 'check AIVYX_PASSPHRASE / the key file; nothing was changed',
    });
  }
}
