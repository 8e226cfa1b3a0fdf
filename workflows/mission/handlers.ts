/**
 * The mission's message handlers. A gate is decided only by the `approveGate`/`denyGate` Updates,
 * each verified by the worker before the gate moves — never by a tool call, so the model can never
 * approve. A `waitFor` step's event arrives as the `missionEvent` Update, verified the same way. A
 * cancel (the signal, or a Temporal cancel) is noted here and acted on by the mission's loop and gates.
 */
import { ApplicationFailure, CancellationScope, setHandler } from '@temporalio/workflow';
import { approverRefusal } from '../../machines/index.js';
import {
  approveGateUpdate,
  cancelMissionSignal,
  denyGateUpdate,
  missionEventUpdate,
  missionStatusQuery,
  type GateDecisionRequest,
  type GateDecisionResult,
  type MissionArgs,
  type MissionEventRequest,
} from '../mission-messages.js';
import { parseGateDecision, parseMissionEvent } from '../inputs.js';
import { acts } from './activities.js';
import type { MissionRun } from './state.js';
import { checked, missionStatus } from './view.js';

const STATUS_DESCRIPTION = 'The mission state, current step, steps run and the current gate, if any';

/** Until the definition is verified the status says only that (a query confers nothing; the real one replaces it). */
export function answerWhileVerifying(args: MissionArgs): void {
  const missionId = args.definition.missionId;
  setHandler(missionStatusQuery, () => ({ missionId, state: 'verifying', step: 0, stepsRun: args.carried?.stepsRun ?? 0 }), {
    description: STATUS_DESCRIPTION,
  });
}

/** Installs the decision and event Updates, the cancel signal, the status query, and the Temporal cancel. */
export function handleMessages(run: MissionRun): void {
  const validator = (value: GateDecisionRequest): void => validateDecision(run, value);
  setHandler(approveGateUpdate, (req) => decide(run, 'APPROVE', req), {
    validator,
    description:
      'Approve the open gate: { gateId, approver, reason?, nonce, proof } — the proof comes from the gateway that authenticated the approver',
  });
  setHandler(denyGateUpdate, (req) => decide(run, 'DENY', req), {
    validator,
    description: 'Deny the open gate: { gateId, approver, reason?, nonce, proof }',
  });
  setHandler(missionEventUpdate, (req) => acceptEvent(run, req), {
    validator: (value) => {
      const req = parseMissionEvent(value);
      const w = run.openWait;
      if (!w || w.waitKey !== req.waitKey || w.arrived) throw new Error(`mission ${run.missionId} is not waiting at ${req.waitKey}`);
    },
    description: 'An inbound event for the open wait: { waitKey, eventId, facts, proof } — the proof comes from the channel adapter',
  });
  setHandler(cancelMissionSignal, ({ reason }) => run.cancel(reason ?? 'mission cancelled'), {
    description: 'Cancel the mission: { reason? }; an open gate is withdrawn and its approvers told',
  });
  setHandler(missionStatusQuery, () => missionStatus(run), { description: STATUS_DESCRIPTION });
  // A Temporal cancel of the mission means the same as the signal.
  CancellationScope.current().cancelRequested.catch(() => run.cancel('mission cancelled'));
}

/** Throws (rejecting the update, changing nothing) unless the gate is open and the approver may decide it. */
function validateDecision(run: MissionRun, value: GateDecisionRequest): void {
  const req = parseGateDecision(value);
  const gate = run.gate;
  if (!gate || gate.getSnapshot().context.gateId !== req.gateId) throw new Error(`mission ${run.missionId} has no gate "${req.gateId}"`);
  const snap = gate.getSnapshot();
  if (snap.status !== 'active') throw new Error(`gate ${req.gateId} is closed (${String(snap.value)}): a gate decides once`);
  const why = approverRefusal(snap.context, req.approver);
  if (why) throw new Error(why);
}

/** A decision: the gate moves only on one the worker verified (proof, approver, first decision). */
async function decide(run: MissionRun, type: 'APPROVE' | 'DENY', req: GateDecisionRequest): Promise<GateDecisionResult> {
  run.deciding++;
  try {
    const verdict = await acts.verifyGateDecision({ kind: type === 'APPROVE' ? 'approve' : 'deny', request: req });
    if (!verdict.ok)
      throw ApplicationFailure.create({
        type: 'CapabilityDenied',
        nonRetryable: true,
        message: `${type === 'APPROVE' ? 'approval' : 'denial'} refused: ${verdict.reason}`,
      });
    const g = run.gate;
    if (!g || g.getSnapshot().context.gateId !== req.gateId || g.getSnapshot().status !== 'active') {
      throw ApplicationFailure.create({
        type: 'NotFound',
        nonRetryable: true,
        message: `gate ${req.gateId} closed while the decision was checked`,
      });
    }
    g.send({ type, approver: req.approver, ...(req.reason ? { reason: req.reason } : {}) });
    checked(run);
    return { gateId: req.gateId, state: String(g.getSnapshot().value) };
  } finally {
    run.deciding--;
  }
}

/** An event for the open wait: it ends the wait only once the worker verified it (proof, match against the verified step, first event). */
async function acceptEvent(run: MissionRun, req: MissionEventRequest): Promise<{ accepted: true }> {
  const w = run.openWait!;
  run.checkingEvents++;
  try {
    const verdict = await acts.verifyMissionEvent({ definition: run.def, step: w.step, request: req });
    if (!verdict.ok)
      throw ApplicationFailure.create({ type: 'CapabilityDenied', nonRetryable: true, message: `event refused: ${verdict.reason}` });
    w.arrived = true;
    return { accepted: true as const };
  } finally {
    run.checkingEvents--;
  }
}
