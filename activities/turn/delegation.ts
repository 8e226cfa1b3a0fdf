/**
 * The worker's checks of a specialist's turn (core/specialists.ts), made in `openTurn` after its
 * proof verified: the proof says the worker attested this exact request for this workflow id; these
 * say the lead it names is a turn this worker verified, the specialist is configured, and the set the
 * child claims is within both the lead's effective set and the specialist's own (defence in depth
 * beside the MAC: a request attested with a wider set is refused here, and audited by `openTurn`).
 */
import { CapabilitySet } from '../../core/capability/index.js';
import type { TurnRequest } from '../../core/channel.js';
import type { Specialist } from '../../core/specialists.js';
import type { TurnActivityDeps, TurnAuthority } from './types.js';

/** A delegated request the worker accepts: its specialist. */
export type DelegationCheck = { specialist: Specialist } | { refused: string };

/** Why a specialist's turn may not run, or its specialist. */
export async function checkDelegation(
  deps: Pick<TurnActivityDeps, 'agent' | 'claims'>,
  req: TurnRequest & { delegatedBy: NonNullable<TurnRequest['delegatedBy']> },
): Promise<DelegationCheck> {
  const { parentTurnId, specialist: name } = req.delegatedBy;
  const specialist = deps.agent.specialists?.find((s) => s.name === name);
  if (!specialist) return { refused: `no specialist named "${name}" is configured` };
  if (!req.turnId.startsWith(`${parentTurnId}/`) || !req.turnId.endsWith(`/${name}`))
    return { refused: `a specialist's turn id must be derived from its lead's call (got "${req.turnId}")` };
  if (!req.capabilityLimit) return { refused: "a specialist's turn must carry the set its lead gave it" };
  const lead = await deps.claims.read<TurnAuthority>('turn', parentTurnId);
  if (!lead) return { refused: `its lead turn "${parentTurnId}" was never verified by this worker` };
  const claimed = CapabilitySet.from(req.capabilityLimit);
  if (!claimed.isSubsetOf(CapabilitySet.fromJSON(lead.data.effective)))
    return { refused: `it claims scopes its lead does not hold (${outside(claimed, lead.data.effective).join(', ')})` };
  if (!claimed.isSubsetOf(CapabilitySet.from(specialist.capabilities)))
    return { refused: `it claims scopes specialist "${name}" may not hold (${outside(claimed, specialist.capabilities).join(', ')})` };
  return { specialist };
}

/** The scopes of `claimed` that `held` does not grant. */
function outside(claimed: CapabilitySet, held: readonly string[]): string[] {
  const set = CapabilitySet.fromJSON(held);
  return claimed.toJSON().filter((s) => !set.grants(s));
}

/** The label a specialist's task carries when its lead had read untrusted content (so the child starts tainted). */
export function delegatedTaskLabel(req: TurnRequest): string | undefined {
  const taint = req.delegatedBy?.taint ?? [];
  return taint.length > 0 ? `the task from lead turn ${req.delegatedBy!.parentTurnId}, written after untrusted content` : undefined;
}
