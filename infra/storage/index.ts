/** Sealed storage: per-domain XChaCha20-Poly1305 records, the keyring that opens them, and key rotation. */
export { SealedStorage } from './sealed-storage.js';
export {
  type DomainHandle,
  type StorageDomain,
  type ScanOptions,
  STORAGE_DOMAINS,
  MAX_KEY_LENGTH,
  assertStorageKey,
} from './domain-handle.js';
export { recordAad, sealRecord, openRecord, NONCE_LENGTH, TAG_LENGTH, type SealedBox } from './record-seal.js';
export { StorageKeyring, unlockStorageKeyring, storageVersionLabel, assertKeysMatchInstall, type StorageKeys } from './storage-keys.js';
export {
  rotateStorageKeys,
  storageKeyStatus,
  ROTATION_TARGET_VERSION,
  type RotateOptions,
  type RotationProgress,
  type RotationResult,
} from './rotate-keys.js';
