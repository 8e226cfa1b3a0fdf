/**
 * Authority proofs (BRIEF §5, DESIGN.md D5): anyone who reaches the Temporal frontend could start a
 * turn claiming `Trusted`, a mission with any capability set, or approve a gate as anyone. Every
 * input that confers authority therefore carries an HMAC under the `attestation` subkey, made by
 * the component that authenticated it and bound to a purpose and to the workflow id it may run
 * under; the worker recomputes it in an activity before the input has any effect.
 */
import type { AuthorityProof, AuthorityPurpose, ProofVerdict } from '../core/authority.js';
import { AUTHORITY_PURPOSES, turnProofBody } from '../core/authority.js';
import type { TurnRequest } from '../core/channel.js';
import { canonicalJson, hmacSha256Hex, timingSafeEqualHex } from './crypto/index.js';

/** Key id written into proofs made with the v1 key schedule. */
export const ATTESTATION_KEY_ID = 'att-v1';

const PURPOSES: ReadonlySet<string> = new Set<AuthorityPurpose>(AUTHORITY_PURPOSES);

/** Options of `seal`. */
export interface SealOptions {
  now?: number;
  /** Refuse the proof this many ms after it was made. */
  ttlMs?: number;
}

/** Makes and checks authority proofs with one key. */
export interface Attestor {
  /** A proof that `body` may be used for `purpose` under workflow `boundTo`. */
  seal(purpose: AuthorityPurpose, boundTo: string, body: unknown, opts?: SealOptions): AuthorityProof;
  /** Checks `proof` for exactly this purpose, workflow id and body; says why when it fails. */
  check(purpose: AuthorityPurpose, boundTo: string, body: unknown, proof: unknown, now?: number): ProofVerdict;
  /** The request with a fresh turn proof attached (bound to its turn id, which is its workflow id). */
  attest(req: TurnRequest, now?: number): TurnRequest;
  /** Checks a turn request's proof against its own turn id. */
  verify(req: TurnRequest): ProofVerdict;
}

/** An attestor over the `attestation` subkey. */
export function createAttestor(key: Uint8Array, keyId = ATTESTATION_KEY_ID): Attestor {
  const mac = (p: Omit<AuthorityProof, 'mac'>, body: unknown): string =>
    hmacSha256Hex(
      key,
      canonicalJson({
        v: p.v,
        keyId: p.keyId,
        purpose: p.purpose,
        boundTo: p.boundTo,
        issuedAt: p.issuedAt,
        ...(p.expiresAt !== undefined ? { expiresAt: p.expiresAt } : {}),
        body,
      }),
    );

  const seal: Attestor['seal'] = (purpose, boundTo, body, opts = {}) => {
    const issuedAt = opts.now ?? Date.now();
    const head: Omit<AuthorityProof, 'mac'> = {
      v: 1,
      keyId,
      purpose,
      boundTo,
      issuedAt,
      ...(opts.ttlMs !== undefined ? { expiresAt: issuedAt + opts.ttlMs } : {}),
    };
    return { ...head, mac: mac(head, body) };
  };

  const check: Attestor['check'] = (purpose, boundTo, body, proof, now = Date.now()) => {
    if (typeof proof !== 'object' || proof === null) return { ok: false, reason: `there is no ${purpose} proof` };
    const p = proof as Partial<AuthorityProof>;
    if (
      p.v !== 1 ||
      typeof p.purpose !== 'string' ||
      !PURPOSES.has(p.purpose) ||
      typeof p.boundTo !== 'string' ||
      typeof p.issuedAt !== 'number'
    )
      return { ok: false, reason: 'the proof is malformed' };
    if (p.keyId !== keyId) return { ok: false, reason: `the proof names an unknown key "${String(p.keyId)}" (made by another install?)` };
    if (typeof p.mac !== 'string' || !/^[0-9a-f]{64}$/.test(p.mac)) return { ok: false, reason: 'the proof MAC is malformed' };
    if (p.expiresAt !== undefined && typeof p.expiresAt !== 'number') return { ok: false, reason: 'the proof is malformed' };
    const expected = mac(
      {
        v: 1,
        keyId,
        purpose: p.purpose as AuthorityPurpose,
        boundTo: p.boundTo,
        issuedAt: p.issuedAt,
        ...(p.expiresAt !== undefined ? { expiresAt: p.expiresAt } : {}),
      },
      body,
    );
    if (!timingSafeEqualHex(p.mac, expected))
      return { ok: false, reason: 'the proof does not match (forged or altered, or made for something else)' };
    // Checked after the MAC, so these reasons are only given for genuine proofs.
    if (p.purpose !== purpose) return { ok: false, reason: `the proof is for ${p.purpose}, not ${purpose}` };
    if (p.boundTo !== boundTo)
      return { ok: false, reason: `the proof is bound to workflow "${p.boundTo}", not "${boundTo}" (a copied input)` };
    if (p.expiresAt !== undefined && now > p.expiresAt)
      return { ok: false, reason: `the proof expired at ${new Date(p.expiresAt).toISOString()}` };
    return { ok: true };
  };

  return {
    seal,
    check,
    attest(req, now) {
      const { attestation: _ignored, ...rest } = req;
      return { ...rest, attestation: seal('turn', rest.turnId, turnProofBody(rest), now === undefined ? {} : { now }) };
    },
    verify(req) {
      return check('turn', req.turnId, turnProofBody(req), req.attestation);
    },
  };
}
