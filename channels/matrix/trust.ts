/**
 * Trust for Matrix: resolved from what the homeserver says (the event's sender, the room's joined
 * members), never from text or a display name. An allowlisted user in a direct chat with the
 * assistant (the room's only other member) is SemiTrusted; every other room is Untrusted unless
 * configured per room, and no configuration can go above SemiTrusted.
 */
import type { TrustTier } from '../../core/capability/index.js';

/** Tiers a Matrix room may be configured to (the ceiling is SemiTrusted). */
export type MatrixTier = Extract<TrustTier, 'SemiTrusted' | 'Untrusted'>;

/** Allowlist and per-room overrides. */
export interface MatrixTrustPolicy {
  /** Matrix user ids (MXIDs) whose direct chats are SemiTrusted. */
  allowlist: readonly string[];
  roomTiers?: Readonly<Record<string, MatrixTier>>;
}

/** The facts a tier is computed from, all from the homeserver. */
export interface MatrixOrigin {
  roomId: string;
  sender: string;
  /** The room's joined members when the event was handled (the assistant among them). */
  members: readonly string[];
  /** The assistant's own user id. */
  self: string;
}

/** True when the room is a direct chat between the assistant and `sender` only. */
export function isDirect(o: MatrixOrigin): boolean {
  return o.members.length === 2 && o.members.includes(o.self) && o.members.includes(o.sender) && o.sender !== o.self;
}

/** The tier of an event from `origin`. */
export function resolveMatrixTier(origin: MatrixOrigin, policy: MatrixTrustPolicy): MatrixTier {
  const configured = policy.roomTiers?.[origin.roomId];
  if (configured === 'Untrusted') return 'Untrusted';
  // A third member could read and write in the "direct" chat: it is a group then.
  if (isDirect(origin) && policy.allowlist.includes(origin.sender)) return 'SemiTrusted';
  return configured === 'SemiTrusted' ? 'SemiTrusted' : 'Untrusted';
}
