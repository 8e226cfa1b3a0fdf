/**
 * Channel attestation (BRIEF §5): anyone who reaches the Temporal frontend could start a turn
 * claiming `Trusted`, so channel adapters MAC the request under a key derived from the master
 * key and the worker recomputes the MAC before the first LLM step.
 */
import { attestedBody, type TurnRequest } from '../core/channel.js';
import { canonicalJson, hmacSha256Hex, timingSafeEqualHex } from './crypto/index.js';

/** Key id written into attestations made with the v1 key schedule. */
export const ATTESTATION_KEY_ID = 'att-v1';

/** Signs and checks channel attestations with one key. */
export interface Attestor {
  /** Returns the request with a fresh attestation attached. */
  attest(req: TurnRequest, now?: number): TurnRequest;
  /** Checks a request's attestation; says why when it fails. */
  verify(req: TurnRequest): { ok: true } | { ok: false; reason: string };
}

/** An attestor over the `attestation` subkey. */
export function createAttestor(key: Uint8Array, keyId = ATTESTATION_KEY_ID): Attestor {
  const mac = (req: TurnRequest, issuedAt: number) => hmacSha256Hex(key, canonicalJson(attestedBody(req, issuedAt)));
  return {
    attest(req, now = Date.now()) {
      const { attestation: _ignored, ...rest } = req;
      return { ...rest, attestation: { keyId, issuedAt: now, mac: mac(rest, now) } };
    },
    verify(req) {
      const a = req.attestation;
      if (!a) return { ok: false, reason: 'the request carries no channel attestation' };
      if (a.keyId !== keyId) return { ok: false, reason: `unknown attestation key id "${a.keyId}"` };
      if (typeof a.mac !== 'string' || !/^[0-9a-f]{64}$/.test(a.mac)) return { ok: false, reason: 'malformed attestation MAC' };
      if (!timingSafeEqualHex(a.mac, mac(req, a.issuedAt))) return { ok: false, reason: 'attestation MAC does not match the request (forged or altered)' };
      return { ok: true };
    },
  };
}
