/**
 * Who may decide a gate follows why it was opened (docs/SECURITY.md, "Who approves"). A gate opened
 * after untrusted content — a message from someone other than the owner, a page, a mail, a file —
 * is decided only by the install's owners: the local owner and the identities in `AIVYX_OWNER_IDS`.
 * The people whose words tainted the turn are never among them: whoever can steer the model could
 * otherwise approve what they made it ask for. Owners are trusted with their own approvals even when
 * their own message carried someone else's text (a forwarded mail). A confirm-first gate on an
 * untainted turn keeps its usual approvers: the asker, where their tier may approve, and the owner.
 * Pure and workflow-safe; the worker applies it when a gate opens and again when a decision arrives.
 */
import type { TrustTier } from './capability/trust-tier.js';
import type { MissionPersonRef } from './mission-owner.js';

/** The owner at their own machine (the CLI, and REST with the owner's token). */
export const LOCAL_OWNER: Readonly<MissionPersonRef> = Object.freeze({ identity: 'local-user', channel: 'cli' });

/** Tiers whose people may decide a gate at all (Untrusted never; Kernel never comes from a channel). */
const ASKER_TIERS: readonly TrustTier[] = ['Trusted', 'SemiTrusted'];

const same = (a: MissionPersonRef, b: MissionPersonRef): boolean => a.identity === b.identity && a.channel === b.channel;

/** `AIVYX_OWNER_IDS` entries (`<channel>:<identity>`, split at the first colon) as people. */
export function ownerRefs(ownerIds: readonly string[]): MissionPersonRef[] {
  const refs: MissionPersonRef[] = [{ ...LOCAL_OWNER }];
  for (const id of ownerIds) {
    const at = id.indexOf(':');
    if (at <= 0 || at === id.length - 1) continue;
    const ref = { channel: id.slice(0, at), identity: id.slice(at + 1) };
    if (!refs.some((r) => same(r, ref))) refs.push(ref);
  }
  return refs;
}

/**
 * True when `who` is one of the install's owners: someone a local channel verified as Trusted (the
 * CLI, REST with the owner's token; no remote channel can be Trusted), or an `AIVYX_OWNER_IDS` identity.
 */
export function isOwner(who: MissionPersonRef & { trustTier?: TrustTier }, ownerIds: readonly string[]): boolean {
  return who.trustTier === 'Trusted' || ownerRefs(ownerIds).some((r) => same(r, who));
}

/** The person who asked, as a channel verified them. */
export interface Asker {
  identity?: string | undefined;
  channel: string;
  trustTier: TrustTier;
}

/** The asker of a channel's verified facts. */
export function gateAskerOf(channel: { name: string; trustTier: TrustTier; sender?: string | undefined }): Asker {
  return { identity: channel.sender, channel: channel.name, trustTier: channel.trustTier };
}

/**
 * Who is asked to decide a gate for `asker`'s call: after untrusted content (`taintedBy` non-empty),
 * the owners only; otherwise the asker (where their tier may approve) and the local owner.
 */
export function gateApproversFor(asker: Asker, taintedBy: readonly string[], ownerIds: readonly string[]): MissionPersonRef[] {
  const tainted = taintedBy.length > 0;
  // After untrusted content the asker stays only when they are an owner themselves (the owner at their machine).
  const mayAsk = tainted ? isOwner({ ...asker, identity: asker.identity ?? '' }, ownerIds) : ASKER_TIERS.includes(asker.trustTier);
  const approvers: MissionPersonRef[] = [];
  if (mayAsk && asker.identity) approvers.push({ identity: asker.identity, channel: asker.channel });
  for (const owner of tainted ? ownerRefs(ownerIds) : [LOCAL_OWNER])
    if (!approvers.some((a) => same(a, owner))) approvers.push({ ...owner });
  return approvers;
}

/** Why `who` may not decide a gate opened after untrusted content, or undefined when they may. */
export function taintGateRefusal(
  who: MissionPersonRef & { trustTier: TrustTier },
  taintedBy: readonly string[],
  ownerIds: readonly string[],
): string | undefined {
  if (taintedBy.length === 0 || isOwner(who, ownerIds)) return undefined;
  return `${who.identity} on ${who.channel} is not an owner: a gate opened after untrusted content is decided only by an owner`;
}

/** The sentence an approval request adds for a gate only owners decide: why them and not the sender. */
export const OWNERS_ONLY_NOTE =
  'Only an owner may decide this: it follows untrusted content, and no one whose content the assistant read may approve what it led to.';
