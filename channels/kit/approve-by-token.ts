/**
 * Approve by token, the same on every channel: a single-use token (infra/gate-tokens.ts) names one
 * gate and the one person on one channel it was sent to. Whoever answers with it is checked against
 * that binding with the identity the platform verified (a Telegram user id, a DKIM-aligned address) —
 * never one taken from the token or the text — and a used token is refused before any decision is sent.
 */
import type { GateTokenPort } from '../ports.js';

/** Why a token cannot decide anything, or the gate it may decide. */
export type TokenVerdict =
  | { ok: true; gateId: string; missionId: string }
  | { ok: false; why: 'invalid' | 'other-channel'; reason: string }
  | { ok: false; why: 'someone-else' | 'used'; reason: string; gateId: string; used?: { decision: string; at: number } };

/** Checks `token` for the person `identity` (as the platform verified it) on `channel`. */
export async function checkApprovalToken(tokens: GateTokenPort, token: string, channel: string, identity: string): Promise<TokenVerdict> {
  const check = await tokens.check(token);
  if (!check.ok) return { ok: false, why: 'invalid', reason: check.reason };
  const { grant } = check;
  if (grant.channel !== channel) return { ok: false, why: 'other-channel', reason: `this approval request was not sent on ${channel}` };
  if (grant.identity.toLowerCase() !== identity.toLowerCase())
    return { ok: false, why: 'someone-else', reason: 'this approval request was sent to someone else', gateId: grant.gateId };
  if (check.used)
    return {
      ok: false,
      why: 'used',
      reason: `this request was already answered (${check.used.decision})`,
      gateId: grant.gateId,
      used: check.used,
    };
  return { ok: true, gateId: grant.gateId, missionId: grant.missionId };
}
