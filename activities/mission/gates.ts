/**
 * A mission's gates: one opened for exactly one pending call and the approvers the verified
 * definition names — or, when the call follows untrusted content, the owners alone
 * (core/gate-approvers.ts) — a decision checked before the gate moves (proof, approver, owner,
 * first decision), and the budget raise an approved budget gate allows.
 */
import { gateDecisionBody } from '../../core/authority.js';
import { inputHash, textHash } from '../../core/canonical-json.js';
import { AivyxError } from '../../core/errors.js';
import { gateApproversFor, gateAskerOf, taintGateRefusal } from '../../core/gate-approvers.js';
import type { SpendBudget } from '../../core/spend.js';
import { APPROVING_TIERS, type GateApproverRef } from '../../machines/index.js';
import { BUDGET_TOOL_ID, type BudgetRaise, type GateDecisionRequest, type MissionDefinition } from '../../workflows/mission-messages.js';
import { currentExecution } from '../execution.js';
import { toApplicationFailure } from '../failure.js';
import type { MissionContext } from './context.js';
import type { DecisionAuthority, GateAuthority, OpenedGate, Verdict } from './types.js';

const same = (a: GateApproverRef, b: GateApproverRef): boolean => a.identity === b.identity && a.channel === b.channel;

/** The activities of a mission's gates. */
export function gateActivities({ deps, audit, heldMission, reachable, gateDecision }: MissionContext) {
  const owners = deps.owners ?? [];

  /**
   * Why a gate's call needs the owners, from this worker's own records: the definition's own taint
   * (a worker-built mission born of untrusted content) and what runTool recorded when the step's
   * turns (or the confirmed turn) asked for this exact call.
   */
  async function gateTaint(def: MissionDefinition, step: number, tool: string, hash: string): Promise<string[]> {
    const turns = [`${def.missionId}/step-${step}`, ...(def.pendingGate ? [def.pendingGate.turnId] : [])];
    const recorded = (await deps.toolCalls?.callTaint(turns, tool, hash)) ?? [];
    return [...new Set([...(def.taintedBy ?? []), ...recorded])];
  }

  return {
    /** Opens a gate for exactly one pending call: claims it (tool, input hash, approvers) and audits `GateOpened`. */
    async openGate(input: {
      definition: MissionDefinition;
      gateId: string;
      step: number;
      tool: string;
      input: unknown;
    }): Promise<OpenedGate> {
      const def = input.definition;
      await reachable(def, input.step);
      const { workflowId, runId } = currentExecution();
      if (!input.gateId.startsWith(`${def.missionId}/gate-`))
        throw toApplicationFailure(new AivyxError('Internal', `gate id ${input.gateId} is not one of mission ${def.missionId}'s`));
      const hash = inputHash(input.input);
      const taintedBy = await gateTaint(def, input.step, input.tool, hash);
      // After untrusted content the owners decide (the asker too, if they are the owner at their machine), and they
      // alone: no second approvers either.
      const data: GateAuthority = {
        missionId: def.missionId,
        tool: input.tool,
        inputHash: hash,
        approvers: taintedBy.length > 0 ? gateApproversFor(gateAskerOf(def.channel), taintedBy, owners) : def.approvers,
        secondApprovers: taintedBy.length > 0 ? [] : (def.secondApprovers ?? []),
        ...(taintedBy.length > 0 ? { taintedBy } : {}),
      };
      const claim = await deps.claims.claim<GateAuthority>({ kind: 'gate', subject: input.gateId, workflowId, runId, data });
      // A continued run reopening a gate its predecessor opened finds it held by that run: same gate, same call.
      if (
        claim.status === 'taken' &&
        (claim.by.workflowId !== workflowId || claim.data.inputHash !== hash || claim.data.tool !== input.tool)
      ) {
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `gate ${input.gateId} was already opened for another call`));
      }
      await audit({
        type: 'GateOpened',
        turnId: def.missionId,
        missionId: def.missionId,
        gateId: input.gateId,
        step: input.step,
        tool: input.tool,
        inputHash: hash,
        approvers: data.approvers.map((a) => `${a.identity}@${a.channel}`),
        ...(data.taintedBy ? { taintedBy: data.taintedBy } : {}),
      });
      return {
        inputHash: hash,
        approvers: data.approvers,
        secondApprovers: data.secondApprovers,
        ...(data.taintedBy ? { ownersOnly: true as const } : {}),
      };
    },

    /**
     * Checks a gate decision before the gate moves: its proof (made by the component that
     * authenticated the approver; bound to this mission, this gate, this decision; unexpired), that
     * the approver was asked and may approve, and that it is the gate's first decision. Audits
     * `GateApproved`/`GateDenied`, or `GateDecisionRejected` with the reason.
     */
    async verifyGateDecision(input: { kind: 'approve' | 'deny'; request: GateDecisionRequest }): Promise<Verdict> {
      const { workflowId, runId } = currentExecution();
      const req = input.request;
      const approver = req.approver ?? { identity: '?', channel: '?', trustTier: 'Untrusted' };
      const reject = async (reason: string): Promise<Verdict> => {
        await audit({
          type: 'GateDecisionRejected',
          turnId: workflowId,
          missionId: workflowId,
          gateId: String(req.gateId),
          decision: input.kind,
          claimedApprover: String(approver.identity),
          claimedChannel: String(approver.channel),
          reason,
        });
        return { ok: false, reason };
      };
      const verdict = deps.proofs.check('gate-decision', workflowId, gateDecisionBody(workflowId, input.kind, req), req.proof);
      if (!verdict.ok) return reject(verdict.reason);
      const gate = await deps.claims.read<GateAuthority>('gate', req.gateId);
      if (!gate || gate.workflowId !== workflowId) return reject(`mission ${workflowId} has no gate ${req.gateId}`);
      if (!APPROVING_TIERS.includes(approver.trustTier)) return reject(`a ${approver.trustTier} channel may not decide a gate`);
      if (![...gate.data.approvers, ...gate.data.secondApprovers].some((a) => same(a, approver)))
        return reject(`${approver.identity} on ${approver.channel} was not asked to decide gate ${req.gateId}`);
      // Checked against this worker's owners, whoever the gate's record lists: a taint gate is the owners' alone.
      const notOwner = taintGateRefusal(approver, gate.data.taintedBy ?? [], owners);
      if (notOwner) return reject(notOwner);
      const claim = await deps.claims.claim<DecisionAuthority>({
        kind: 'gate-decision',
        subject: req.gateId,
        workflowId,
        runId,
        data: { kind: input.kind, approver, nonce: req.nonce },
      });
      if (claim.data.nonce !== req.nonce)
        return reject(
          `gate ${req.gateId} was already decided (${claim.data.kind} by ${claim.data.approver.identity}@${claim.data.approver.channel}): a gate decides once`,
        );
      const event = {
        turnId: workflowId,
        missionId: workflowId,
        gateId: req.gateId,
        approver: approver.identity,
        approverChannel: approver.channel,
        approverTier: approver.trustTier,
        ...(req.reason ? { reasonHash: textHash(req.reason) } : {}),
      };
      await audit(input.kind === 'approve' ? { type: 'GateApproved', ...event } : { type: 'GateDenied', ...event });
      return { ok: true };
    },

    /**
     * The budget an approver raised at a budget gate: only when that gate of this verified mission was
     * opened for exactly this raise and its decision (checked by verifyGateDecision) approved it.
     * Audits `MissionBudgetRaised`.
     */
    async raiseMissionBudget(input: { definition: MissionDefinition; gateId: string; raise: BudgetRaise }): Promise<SpendBudget> {
      const def = input.definition;
      await heldMission(def);
      if ((await gateDecision(def.missionId, input.gateId, BUDGET_TOOL_ID, inputHash(input.raise))) !== 'approve')
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${def.missionId}: gate ${input.gateId} did not approve raising the budget to that`),
        );
      const { budget, raiseTo } = input.raise;
      await audit({
        type: 'MissionBudgetRaised',
        turnId: def.missionId,
        missionId: def.missionId,
        gateId: input.gateId,
        ...(budget.tokens !== undefined ? { fromTokens: budget.tokens } : {}),
        ...(raiseTo.tokens !== undefined ? { toTokens: raiseTo.tokens } : {}),
        ...(budget.costUsd !== undefined ? { fromCostUsd: budget.costUsd } : {}),
        ...(raiseTo.costUsd !== undefined ? { toCostUsd: raiseTo.costUsd } : {}),
      });
      return raiseTo;
    },
  };
}
