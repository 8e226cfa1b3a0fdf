/**
 * MACed single-use gate tokens for approvals from a chat or a mailbox (Telegram buttons,
 * email replies). A token is `<ref>.<mac>`: `ref` is a random id naming a record in the sealed
 * `channel_state` domain (gate id, approver identity and channel), and `mac` is an HMAC over
 * the ref and that record, so a token cannot be guessed, altered or moved to another gate or
 * approver. It is short enough for Telegram's 64-byte callback data.
 *
 * Single use is enforced twice: the record is marked used once a decision is sent, and the
 * mission's Update validator refuses any decision on a closed gate.
 */
import { randomBytes } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson, timingSafeEqualHex } from './crypto/index.js';
import type { DomainHandle } from './storage/index.js';

/** The gate and approver a token was issued to. */
export interface GateTokenGrant {
  gateId: string;
  missionId: string;
  identity: string;
  channel: string;
}

/** A resolved token. */
export type GateTokenCheck = { ok: true; grant: GateTokenGrant; used?: { decision: string; at: number } } | { ok: false; reason: string };

interface TokenRecord extends GateTokenGrant {
  issuedAt: number;
  used?: { decision: string; at: number };
}

const TOKEN = /^([A-Za-z0-9_-]{11})\.([0-9a-f]{24})$/;
const INFO = new TextEncoder().encode('aivyx gate token v1');

/** Derives the token MAC key from the `channel_state` subkey (a separate key: a MAC key is not a sealing key). */
export function gateTokenKey(channelStateKey: Uint8Array): Uint8Array {
  return hkdf(sha256, channelStateKey, undefined, INFO, 32);
}

/** Issues and checks gate tokens. */
export class GateTokens {
  constructor(
    private readonly key: Uint8Array,
    private readonly store: DomainHandle,
  ) {}

  private mac(ref: string, grant: GateTokenGrant): string {
    const body = canonicalJson({ ref, gateId: grant.gateId, missionId: grant.missionId, identity: grant.identity, channel: grant.channel });
    return Buffer.from(hmac(sha256, this.key, new TextEncoder().encode(body)).subarray(0, 12)).toString('hex');
  }

  /** A fresh token for `grant` (one per approver and notice; all stay valid until the gate closes). */
  async issue(grant: GateTokenGrant): Promise<string> {
    const ref = randomBytes(8).toString('base64url');
    await this.store.putJson(`gate-token/${ref}`, { ...grant, issuedAt: Date.now() } satisfies TokenRecord);
    return `${ref}.${this.mac(ref, grant)}`;
  }

  /** Finds a token anywhere in `text` (a subject, an address, callback data). */
  static find(text: string): string | undefined {
    return /([A-Za-z0-9_-]{11}\.[0-9a-f]{24})/.exec(text)?.[1];
  }

  /** Checks a token's form, record and MAC. */
  async check(token: string): Promise<GateTokenCheck> {
    const m = TOKEN.exec(token);
    if (!m?.[1] || !m[2]) return { ok: false, reason: 'this is not an approval token' };
    const rec = await this.store.getJson<TokenRecord>(`gate-token/${m[1]}`);
    if (!rec) return { ok: false, reason: 'this approval request is unknown here (it may belong to another install)' };
    const grant: GateTokenGrant = { gateId: rec.gateId, missionId: rec.missionId, identity: rec.identity, channel: rec.channel };
    if (!timingSafeEqualHex(m[2], this.mac(m[1], grant)))
      return { ok: false, reason: 'this approval token does not verify (altered or forged)' };
    return { ok: true, grant, ...(rec.used ? { used: rec.used } : {}) };
  }

  /** Records that a decision was sent with `token` (a second press is then refused before any Update). */
  async markUsed(token: string, decision: string): Promise<void> {
    const ref = TOKEN.exec(token)?.[1];
    if (!ref) return;
    const rec = await this.store.getJson<TokenRecord>(`gate-token/${ref}`);
    if (rec && !rec.used)
      await this.store.putJson(`gate-token/${ref}`, { ...rec, used: { decision, at: Date.now() } } satisfies TokenRecord);
  }
}
