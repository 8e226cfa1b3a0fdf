/**
 * The pinned-device check on what a decryption says (the real Synapse tests drive it end to end:
 * matrix-e2ee-verify.test.ts); here, the forgeries a homeserver or another device could try that the
 * Rust crypto would report but the real-world tests cannot easily produce.
 */
import { ShieldStateCode } from '@matrix-org/matrix-sdk-crypto-wasm';
import { describe, expect, it } from 'vitest';
import { fromPinnedDevice, type DecryptionFacts } from '../../channels/matrix/verify.js';

const ED = 'Nmsc7yZsfV6c/GT6Or7NXIcN2mgmtqWymkfWhyUdVEE';
const CURVE = 'bqV2XVhZ37IB53mq5J9jQg8nVjDyZ+ZlaEUqWo5vW2w';
const OTHER = 'NkHpC6asCKe3esQTY+AdinxvKlIgsXkxch6PH3hwpcE';
const pins = [{ userId: '@alice:x', deviceId: 'PHONE', ed25519: ED }];
const device = { ed25519: ED, curve25519: CURVE };
const facts = (over: Partial<DecryptionFacts> = {}): DecryptionFacts => ({
  sender: '@alice:x',
  senderDevice: 'PHONE',
  senderCurve25519Key: CURVE,
  senderClaimedEd25519Key: ED,
  shieldCode: ShieldStateCode.UnsignedDevice,
  ...over,
});

describe('fromPinnedDevice', () => {
  it('passes the pinned device, authenticated, whether or not it is cross-signed', () => {
    expect(fromPinnedDevice(pins, facts(), device)).toBe(true);
    expect(fromPinnedDevice(pins, facts({ shieldCode: undefined }), device)).toBe(true);
  });

  it('refuses another sender, another or unknown device, and a device whose key is not the pinned one', () => {
    expect(fromPinnedDevice(pins, facts({ sender: '@bob:x' }), device)).toBe(false);
    expect(fromPinnedDevice(pins, facts({ senderDevice: 'LAPTOP' }), device)).toBe(false);
    expect(fromPinnedDevice(pins, facts({ senderDevice: undefined }), device)).toBe(false);
    expect(fromPinnedDevice(pins, facts(), undefined)).toBe(false);
    expect(fromPinnedDevice(pins, facts(), { ...device, ed25519: OTHER })).toBe(false);
    expect(fromPinnedDevice([], facts(), device)).toBe(false);
  });

  it('refuses a room key that did not come from the device’s keys, or that the crypto calls unauthenticated', () => {
    expect(fromPinnedDevice(pins, facts({ senderCurve25519Key: OTHER }), device)).toBe(false);
    expect(fromPinnedDevice(pins, facts({ senderClaimedEd25519Key: OTHER }), device)).toBe(false);
    expect(fromPinnedDevice(pins, facts({ senderClaimedEd25519Key: undefined }), device)).toBe(false);
    for (const code of [
      ShieldStateCode.AuthenticityNotGuaranteed,
      ShieldStateCode.UnknownDevice,
      ShieldStateCode.VerificationViolation,
      ShieldStateCode.SentInClear,
    ])
      expect(fromPinnedDevice(pins, facts({ shieldCode: code }), device)).toBe(false);
  });
});
