/**
 * A turn step: the worker attests the step's request from the verified definition (the workflow holds
 * no key), it runs as a child `turnWorkflow`, and a turn that ends `Escalated` opens a gate for exactly
 * its pending call. A confirmation mission's first step starts at that gate (its seed).
 */
import { executeChild } from '@temporalio/workflow';
import type { TurnRequest } from '../../core/channel.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { addSpend } from '../../core/spend.js';
import type { StepGrant } from '../../machines/index.js';
import { childTurnOutcome } from '../child-turn.js';
import { turnWorkflow } from '../turn-workflow.js';
import { acts } from './activities.js';
import { awaitGate } from './gates.js';
import type { MissionRun } from './state.js';
import { checked } from './view.js';

/** Runs step `step` as a child turn (after an approval, with the gate's one-shot grant), counts it and records its end. */
export async function runTurnStep(run: MissionRun, step: number, attempt: number, grant: StepGrant | undefined): Promise<TurnOutcome> {
  // After an approval the attestation is remote: a local activity would hold the workflow task that
  // answers the approver's Update open until it finished.
  const request = await (grant ? acts : run.books).attestStepTurn({ definition: run.def, step, attempt, ...(grant ? { grant } : {}) });
  const outcome = await runStepTurn(request);
  run.spent = addSpend(run.spent, outcome.spend);
  run.countStep();
  await run.auditStepTurnEnd({ type: 'MissionStepFinished', step, attempt, stepTurnId: request.turnId, outcome: outcome.status });
  return outcome;
}

/** The seed of a confirmation mission: the asking turn's escalation stands in for step 1's first run. */
export async function seededOutcome(run: MissionRun, step: number, attempt: number): Promise<TurnOutcome> {
  const seeded = run.seeded!;
  const outcome: TurnOutcome = {
    status: 'Escalated',
    reason: seeded.reason,
    pendingTool: seeded.tool,
    pendingInput: seeded.input,
    toolCallsMade: 0,
  };
  await run.audit({ type: 'MissionStepFinished', step, attempt, stepTurnId: seeded.turnId, outcome: outcome.status });
  run.seeded = undefined;
  return outcome;
}

/** Runs one step turn as a child; a failed turn's outcome is read back from the failure's details. */
function runStepTurn(request: TurnRequest): Promise<TurnOutcome> {
  return childTurnOutcome(executeChild(turnWorkflow, { workflowId: request.turnId, args: [request] }));
}

/**
 * Moves the mission on from a step's outcome: done, failed, or — escalated — through a gate for
 * exactly the pending call. `fromChild`: a child's result (in the history) decided the outcome, so the
 * gate may be opened locally; a seed's gate is opened remotely.
 */
export async function settleStep(run: MissionRun, step: number, outcome: TurnOutcome, fromChild: boolean): Promise<void> {
  const { mission } = run;
  if (outcome.status === 'Completed') {
    mission.send({ type: 'STEP_DONE' });
    checked(run);
    return;
  }
  if (outcome.status !== 'Escalated') {
    const reason = outcome.status === 'Failed' ? `${outcome.error.kind}: ${outcome.error.message}` : `step turn ended ${outcome.status}`;
    mission.send({ type: 'STEP_FAILED', reason });
    checked(run);
    return;
  }
  await escalationGate(run, step, outcome, fromChild);
}

/** The gate for an escalated step's pending call; the mission moves on by how it ended. */
async function escalationGate(
  run: MissionRun,
  step: number,
  outcome: Extract<TurnOutcome, { status: 'Escalated' }>,
  fromChild: boolean,
): Promise<void> {
  const { mission, def } = run;
  const ended = await awaitGate(
    run,
    step,
    {
      tool: outcome.pendingTool,
      input: outcome.pendingInput,
      reason: outcome.reason,
      expireMs: run.timers.expireMs,
      expiredText: `the gate expired; the mission ${def.onExpire === 'fail' ? 'ends' : 'skips the step'}`,
    },
    (gateId) => {
      mission.send({ type: 'STEP_ESCALATED', gateId });
      checked(run);
    },
    fromChild ? run.books.openGate : acts.openGate,
  );
  switch (ended.value) {
    case 'approved':
      mission.send({ type: 'GATE_APPROVED', grant: { gateId: ended.gateId, tool: ended.tool, inputHash: ended.inputHash } });
      break;
    case 'denied':
      // The denier's own words go to the mission's result, not into its failure (and so not into
      // MissionEnded): the audit log holds no user text.
      run.deniedSaying = ended.reason;
      mission.send({ type: 'GATE_DENIED', reason: `gate denied by ${ended.by?.identity ?? '?'} on ${ended.by?.channel ?? '?'}` });
      break;
    case 'expired':
      mission.send({ type: 'GATE_EXPIRED' });
      break;
    case 'withdrawn':
      mission.send({ type: 'CANCEL' });
      break;
  }
  checked(run);
}
