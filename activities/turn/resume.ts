/**
 * The worker's half of "a chore approved is a chore finished": the rerun of an approved call
 * continues from the turn that asked (its resume record) instead of planning afresh. openTurn takes
 * a record only for an attested request that names it (`resumeFrom`, set by the worker beside the
 * grant for that call), only when the record is of the grant's mission and for exactly the granted
 * call, and only once (a `resume` claim).
 */
import { toolCallProofBody } from '../../core/authority.js';
import { inputHash } from '../../core/canonical-json.js';
import type { OneShotGrant, TurnRequest } from '../../core/channel.js';
import type { ToolCall } from '../../core/tools.js';
import { confirmationMissionId } from '../../workflows/turn-ids.js';
import type { SpendBudget } from '../../core/spend.js';
import { tighterBudget } from '../../core/specialists.js';
import type { ResumeRecord } from '../ports.js';
import type { OpenedResume, TurnActivityDeps } from './types.js';

/** The mission that reruns an escalated turn's call: its own (a step turn), or the turn's confirmation mission. */
export function resumingMission(escalatedTurnId: string, missionId: string): boolean {
  // Exactly a step turn of this mission (not one of a mission whose id merely starts with this one's).
  const own = escalatedTurnId.startsWith(`${missionId}/`) && /^step-\d+\/run-\d+$/.test(escalatedTurnId.slice(missionId.length + 1));
  return own || confirmationMissionId(escalatedTurnId) === missionId;
}

/** True when the record's pending call is exactly the one the grant lets past its gate. */
export function grantedCall(record: ResumeRecord, grant: Pick<OneShotGrant, 'tool' | 'inputHash'>): boolean {
  return record.call.tool === grant.tool && inputHash(record.call.input) === grant.inputHash;
}

/** The claim that keeps a record used once. */
interface ResumeClaim {
  by: string;
}

/** The record a verified request names, when it may resume from it; or why it may not. */
export async function resumeRecordFor(
  deps: Pick<TurnActivityDeps, 'resumes'>,
  req: TurnRequest & { resumeFrom: string },
): Promise<{ record: ResumeRecord } | { refused: string }> {
  const from = req.resumeFrom;
  const grant = req.oneShotGrant;
  if (!grant) return { refused: `it resumes turn ${from} without the grant for that turn's call` };
  if (from === req.turnId) return { refused: 'it resumes itself' };
  const record = await deps.resumes?.load(from);
  if (!record) return { refused: `turn ${from} left no resume record on this worker` };
  if (!resumingMission(record.turnId, grant.missionId))
    return { refused: `the resume record of turn ${from} is not mission ${grant.missionId}'s` };
  if (!grantedCall(record, grant))
    return { refused: `the resume record of turn ${from} is for another call than gate ${grant.gateId} approved` };
  return { record };
}

/** Claims the record for this run (a record is used once); why not, when another run took it. */
export async function claimResume(
  deps: Pick<TurnActivityDeps, 'claims'>,
  record: ResumeRecord,
  turnId: string,
  run: { workflowId: string; runId: string },
): Promise<string | undefined> {
  const claim = await deps.claims.claim<ResumeClaim>({ kind: 'resume', subject: record.turnId, ...run, data: { by: turnId } });
  return claim.status === 'taken'
    ? `turn ${record.turnId} was already resumed, by run ${claim.by.runId} of ${claim.by.workflowId} (a record is used once)`
    : undefined;
}

/**
 * What the workflow continues from: the record, with proofs that let this run's runTool run the
 * approved call and ask again for the same step's other gated calls (they ran not: they asked, and
 * without a grant of their own they ask again, so the next gate is theirs without a new plan).
 */
export function openedResume(deps: Pick<TurnActivityDeps, 'proofs'>, record: ResumeRecord, turnId: string, runId: string): OpenedResume {
  const { step, call } = record;
  const prove = (c: ToolCall) => deps.proofs.seal('tool-call', turnId, toolCallProofBody(runId, step, c));
  return {
    from: record.turnId,
    step,
    call,
    callProof: prove(call),
    alsoAsked: (record.alsoAsked ?? []).map((c) => ({ call: c, proof: prove(c) })),
    transcript: record.transcript,
    context: record.context,
    trusted: record.trusted,
  };
}

/** Who a verified turn runs as: a specialist (its lead, its budget slice, the set it held at most), or no one. */
export interface RunsAs {
  specialist?: string;
  leadTurnId?: string;
  spendLimit?: SpendBudget;
  /** The rerun of a specialist's call holds no more than the specialist did. */
  within?: string[];
}

/**
 * A specialist's turn runs as the specialist its attested delegation names; the approved rerun of its
 * call runs as the specialist the worker's sealed resume record names — never one a rerun's input
 * names — with its instructions, model and budget slice, and within the set it held.
 */
export function runsAs(
  deps: Pick<TurnActivityDeps, 'agent'>,
  req: TurnRequest,
  record: ResumeRecord | undefined,
): RunsAs | { refused: string } {
  const resumed = record?.specialist;
  if (resumed && !deps.agent.specialists?.some((s) => s.name === resumed.name))
    return { refused: `turn ${record.turnId} ran as specialist "${resumed.name}", which is no longer configured` };
  const specialist = req.delegatedBy?.specialist ?? resumed?.name;
  const leadTurnId = req.delegatedBy?.parentTurnId ?? resumed?.leadTurnId;
  const spendLimit = tighterBudget(req.spendLimit, resumed?.spendLimit);
  return {
    ...(specialist && leadTurnId ? { specialist, leadTurnId } : {}),
    ...(spendLimit ? { spendLimit } : {}),
    ...(resumed ? { within: resumed.effective } : {}),
  };
}
