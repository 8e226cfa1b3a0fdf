/**
 * The owner's gates on the CLI: `aivyx approvals` lists those waiting for local-user on cli, each with
 * the call it would run; `aivyx approve|deny [GATE]` (and `mission approve|deny`) decides one — by a
 * short id, or with no id when exactly one waits. Deciding goes through the REST channel, the same
 * signed path as every channel's approvals.
 */
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import { shortestUniquePrefix } from '../../core/short-id.js';
import type { MissionSummary } from '../ports.js';
import type { MissionStatus } from '../../workflows/mission-messages.js';
import { MISSION_PREFIXES, resolveGateId, resolveMissionId } from './id-lookup.js';
import { restJson, type RestTarget } from './rest-client.js';

/** One gate waiting for the owner, with its mission's status. */
export interface WaitingGate {
  missionId: string;
  gate: NonNullable<MissionStatus['gate']>;
}

/** The usage lines of `aivyx approve|deny`. */
export const DECIDE_USAGE = `  aivyx approve [GATE] [--reason R]      approve a gate as local-user (no GATE: the one waiting for you; GATE may be its start)
  aivyx deny [GATE] [--reason R]         deny it`;

/** A gate as approvers see it: the call as it will run (canonical, secrets redacted), why, and who asked where. */
export function gateLines(gate: NonNullable<MissionStatus['gate']>): string[] {
  return [
    `  gate ${gate.gateId}: ${gate.state} — ${gate.tool} (input ${gate.inputHash.slice(0, 12)}…), approvers ${gate.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ')}`,
    ...(gate.call ?? []).map((l) => `    ${l}`),
    ...(gate.why ? [`    why: ${gate.why}`] : []),
    ...(gate.askedBy ? [`    asked by ${gate.askedBy.identity} on ${gate.askedBy.channel}`] : []),
  ];
}

/** The open gates local-user on cli may decide, oldest mission last (as the list comes). */
export async function waitingGates(target: RestTarget): Promise<WaitingGate[]> {
  const waiting = (await restJson(target, 'GET', '/v1/missions?state=waiting')) as MissionSummary[];
  const out: WaitingGate[] = [];
  for (const m of waiting) {
    const s = (await restJson(target, 'GET', `/v1/missions/${encodeURIComponent(m.missionId)}`)) as MissionStatus;
    if (s.gate?.state === 'open' && s.gate.approvers.some((a) => a.identity === 'local-user' && a.channel === 'cli'))
      out.push({ missionId: s.missionId, gate: s.gate });
  }
  return out;
}

/** The shortest id that names each gate among `gates`: the start of its mission id, `mission-` (or `mission-confirm-`) left out. */
function shortIds(gates: readonly WaitingGate[]): Map<string, string> {
  const ids = gates.map((g) => g.missionId);
  const prefixOf = (id: string) => [...MISSION_PREFIXES].reverse().find((p) => id.startsWith(p)) ?? '';
  return new Map(gates.map((g) => [g.gate.gateId, shortestUniquePrefix(g.missionId, ids, prefixOf(g.missionId))]));
}

/** `aivyx approvals`: the gates waiting for the owner, each with what will run and how to decide it. */
export async function runApprovalsCommand(target: RestTarget, out: (s: string) => void): Promise<number> {
  const gates = await waitingGates(target);
  const short = shortIds(gates);
  const lines = gates.flatMap((g) => {
    const id = gates.length === 1 ? '' : ` ${short.get(g.gate.gateId)!}`;
    return [`mission ${g.missionId}`, ...gateLines(g.gate), `  decide: aivyx approve${id}   (or: aivyx deny${id} --reason "…")`];
  });
  out(lines.length === 0 ? 'nothing is waiting for your approval\n' : `${lines.join('\n')}\n`);
  return 0;
}

/** The gate to decide: the one named (whole or its start), or — with no id — the only one waiting for the owner. */
async function gateToDecide(target: RestTarget, kind: 'approve' | 'deny', named: string | undefined): Promise<string> {
  if (named !== undefined) return resolveGateId(target, named);
  const gates = await waitingGates(target);
  if (gates.length === 1) return gates[0]!.gate.gateId;
  if (gates.length === 0) throw new AivyxError('NotFound', 'nothing is waiting for your approval', { hint: 'see `aivyx mission list`' });
  const short = shortIds(gates);
  throw new AivyxError(
    'Config',
    `${gates.length} gates are waiting for you; say which:\n${gates.map((g) => `  aivyx ${kind} ${short.get(g.gate.gateId)!}   ${g.gate.tool} (mission ${g.missionId})`).join('\n')}`,
    { hint: 'see `aivyx approvals` for the call each would run' },
  );
}

/** `aivyx approve|deny [GATE] [--mission ID] [--reason R]`: decides a gate as local-user; returns the exit code. */
export async function runDecisionCommand(
  kind: 'approve' | 'deny',
  args: string[],
  target: RestTarget,
  out: (s: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { mission: { type: 'string' }, reason: { type: 'string' } },
  });
  if (positionals.length > 1) throw new AivyxError('Config', `${kind} takes at most one gate id`, { hint: DECIDE_USAGE });
  const gateId = await gateToDecide(target, kind, positionals[0]);
  const missionId = values.mission === undefined ? undefined : await resolveMissionId(target, values.mission);
  const r = (await restJson(target, 'POST', `/v1/gates/${kind}`, {
    gateId,
    ...(missionId ? { missionId } : {}),
    ...(values.reason ? { reason: values.reason } : {}),
  })) as { gateId: string; state: string };
  out(`gate ${r.gateId}: ${r.state}\n`);
  return 0;
}
