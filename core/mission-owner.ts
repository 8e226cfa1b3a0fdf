/**
 * Whose mission is it? The pure rule behind `mission.list`, `mission.cancel`, Telegram `/missions` and
 * the e-mail `missions` command: a person may see and cancel a mission when its (verified) definition
 * names them — as one of its approvers, or as the sender on the channel it runs for — and their
 * channel's tier may approve at all. The owner at their own machine (a Trusted local channel) owns
 * every mission of the install. Identities are compared with their channel: `123` on Telegram is not
 * `123` on e-mail. Workflow-safe: no I/O.
 */
import type { TrustTier } from './capability/trust-tier.js';

/** A person on a channel, as a definition names them (an approver, the mission's sender). */
export interface MissionPersonRef {
  identity: string;
  channel: string;
}

/** Who a mission belongs to: read from its verified definition. */
export interface MissionOwners {
  /** The approvers and second approvers of its gates. */
  approvers: readonly MissionPersonRef[];
  /** The sender on the channel it runs for (whoever asked for it). */
  sender: MissionPersonRef;
}

/** Who is asking: the identity and tier a channel verified (never text). */
export interface MissionAsker {
  identity: string;
  channel: string;
  trustTier: TrustTier;
  /** A local channel (the CLI, or REST with the owner's token): at Trusted, the install's owner. */
  local: boolean;
}

/** Platforms only the owner reaches (the CLI; REST needs the token in the data directory). */
const LOCAL_PLATFORMS: readonly string[] = ['Local', 'Rest'];

/** Tiers whose people may act on their own missions (those that may decide a gate). */
const ACTING_TIERS: readonly TrustTier[] = ['Trusted', 'SemiTrusted'];

const same = (a: MissionPersonRef, b: MissionPersonRef): boolean => a.identity === b.identity && a.channel === b.channel;

/** True when `asker` may see and cancel a mission with these owners. Deny by default. */
export function ownsMission(owners: MissionOwners, asker: MissionAsker): boolean {
  if (!ACTING_TIERS.includes(asker.trustTier) || asker.identity === '') return false;
  if (asker.local && asker.trustTier === 'Trusted') return true;
  return owners.approvers.some((a) => same(a, asker)) || same(owners.sender, asker);
}

/** The asker behind a turn's verified channel facts. */
export function askerOf(channel: { name: string; platform: string; trustTier: TrustTier; sender: string }): MissionAsker {
  return {
    identity: channel.sender,
    channel: channel.name,
    trustTier: channel.trustTier,
    local: LOCAL_PLATFORMS.includes(channel.platform),
  };
}
