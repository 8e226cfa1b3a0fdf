/** The process-wide sealed storage handle: hands out one cached `DomainHandle` per domain. */
import type { Kysely } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import type { MasterKey } from '../crypto/key-schedule.js';
import type { Database } from '../db/database.js';
import { SealedDomainHandle, STORAGE_DOMAINS, type DomainHandle, type StorageDomain } from './domain-handle.js';
import { toStorageKeys, type StorageKeys } from './storage-keys.js';

/**
 * Sealed key/value storage over `sealed_records`. Open it once per process in the composition
 * root and pass domain handles down; it holds no connection of its own.
 */
export class SealedStorage {
  readonly #handles = new Map<StorageDomain, DomainHandle>();

  private constructor(
    /** The database the records live in (rotation and tests reuse it). */
    readonly db: Kysely<Database>,
    /** Subkeys by version; a plain MasterKey only gives version 1. */
    readonly keys: StorageKeys,
  ) {}

  /** Opens storage with a `StorageKeyring` (all versions) or a plain v1 `MasterKey`. */
  static open(db: Kysely<Database>, master: MasterKey | StorageKeys): SealedStorage {
    return new SealedStorage(db, toStorageKeys(master));
  }

  /** The handle of domain `d` (the same object on every call). */
  domain(d: StorageDomain): DomainHandle {
    let h = this.#handles.get(d);
    if (h === undefined) {
      if (!STORAGE_DOMAINS.includes(d))
        throw new AivyxError('Config', `unknown storage domain "${String(d)}"`, { hint: `one of ${STORAGE_DOMAINS.join(', ')}` });
      h = new SealedDomainHandle(d, this.db, this.keys);
      this.#handles.set(d, h);
    }
    return h;
  }
}
