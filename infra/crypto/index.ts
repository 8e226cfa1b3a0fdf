/** Key schedule (Argon2id + HKDF domains) and canonical JSON / MAC helpers. */
export {
  type KeyDomain,
  type KdfParams,
  KEY_DOMAINS,
  DEFAULT_KDF_PARAMS,
  KEY_SCHEDULE_VERSION,
  KEY_LENGTH,
  assertKdfParams,
  deriveMasterKey,
  deriveSubkey,
  keyCheckValue,
  installIdOf,
  MasterKey,
} from './key-schedule.js';
export { canonicalJson, sha256Hex, hmacSha256Hex, timingSafeEqualHex, timingSafeEqualBytes } from '../../core/canonical-json.js';
