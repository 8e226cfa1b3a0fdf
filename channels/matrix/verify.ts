/**
 * Device verification we support: **owner-pinned device keys** (AIVYX_MATRIX_VERIFIED_DEVICES), the
 * out-of-band check Element calls comparing a session's key. An encrypted event is from a verified
 * device only when everything below holds for one pin — each check closes a way around the others:
 *
 * - the event's sender (the homeserver's word, which the ciphertext's sender must equal: crypto.ts)
 *   is the pin's user: a pin names a person's device, not a key anyone may present;
 * - the Rust crypto found the device by the Olm session the room key came over (`senderDevice` is
 *   looked up from the session's curve25519 key, not read from the event's claims), and it is the
 *   pin's device id;
 * - that device's ed25519 key, as the crypto store holds it from the signed device keys, is the
 *   pinned fingerprint: a device re-created under the same id with new keys does not pass;
 * - the room key's sender key is that device's curve25519 key and its claimed ed25519 key is the
 *   device's, and the crypto's own shield does not say the key's authenticity is not guaranteed (a
 *   forwarded or backed-up key), the device is unknown, or the sender's identity was changed.
 *
 * We compare on every event instead of marking the device locally trusted in the OlmMachine
 * (`setLocalTrust`): that mark would live in the sealed store and outlast the pin once the owner
 * removes it from the configuration, and `isVerified()` also says yes through cross-signing chains
 * we do not otherwise check. Here the configuration alone decides (DESIGN.md, "Matrix").
 */
import * as wasm from '@matrix-org/matrix-sdk-crypto-wasm';

/** A device verified out of band: its owner, its id, its ed25519 key (canonical unpadded base64). */
export interface DevicePin {
  userId: string;
  deviceId: string;
  ed25519: string;
}

/** What a decryption says of its sender (the parts of `DecryptedRoomEvent` the check reads). */
export interface DecryptionFacts {
  sender: string;
  senderDevice: string | undefined;
  senderCurve25519Key: string | undefined;
  senderClaimedEd25519Key: string | undefined;
  shieldCode: wasm.ShieldStateCode | undefined;
}

/** What the crypto store holds of the sending device. */
export interface KnownDevice {
  ed25519: string | undefined;
  curve25519: string | undefined;
}

// A shield that says the key may not be the device's, or the device/identity is not the one known.
const DISQUALIFYING = new Set<wasm.ShieldStateCode>([
  wasm.ShieldStateCode.AuthenticityNotGuaranteed,
  wasm.ShieldStateCode.UnknownDevice,
  wasm.ShieldStateCode.VerificationViolation,
  wasm.ShieldStateCode.SentInClear,
]);

/** Unpadded base64, the form Matrix writes keys in (a key with padding compares equal to one without). */
const canonical = (key: string | undefined): string | undefined => key?.replace(/\s+/g, '').replace(/=+$/, '');

/** True only when the decrypted event is from a pinned device, authenticated (see the module comment). */
export function fromPinnedDevice(pins: readonly DevicePin[], facts: DecryptionFacts, device: KnownDevice | undefined): boolean {
  if (!device || !facts.senderDevice) return false;
  const pin = pins.find((p) => p.userId === facts.sender && p.deviceId === facts.senderDevice);
  if (!pin) return false;
  const ed25519 = canonical(device.ed25519);
  const curve25519 = canonical(device.curve25519);
  if (!ed25519 || !curve25519 || ed25519 !== canonical(pin.ed25519)) return false;
  if (canonical(facts.senderCurve25519Key) !== curve25519 || canonical(facts.senderClaimedEd25519Key) !== ed25519) return false;
  return facts.shieldCode === undefined || !DISQUALIFYING.has(facts.shieldCode);
}
