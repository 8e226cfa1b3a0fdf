/**
 * A mission's spend budget (docs/BUDGETS.md): a step that may spend (a turn, a plan) waits while the
 * budget is used up, at a gate that asks an approver to raise it.
 */
import { patched } from '@temporalio/workflow';
import { budgetUsedUp, describeBudget, raisedBudget, type SpendBudget } from '../../core/spend.js';
import { isTurnStep, type MissionStep } from '../../machines/index.js';
import { BUDGET_TOOL_ID } from '../mission-messages.js';
import { MISSION_SPEND_BUDGET } from '../patches.js';
import { acts } from './activities.js';
import { awaitGate } from './gates.js';
import type { MissionRun } from './state.js';
import { checked } from './view.js';

/** Holds a step that may spend at the budget gate while the budget is used up; says whether it did (the step then waits its turn again). */
export async function heldByBudget(run: MissionRun, step: number, stepDef: MissionStep | undefined): Promise<boolean> {
  const usedUp =
    stepDef && (isTurnStep(stepDef) || stepDef.kind === 'plan') && !run.seeded ? budgetUsedUp(run.spent, run.budget) : undefined;
  if (!(usedUp && run.budget && patched(MISSION_SPEND_BUDGET))) return false;
  await budgetGate(run, step, run.budget, usedUp);
  return true;
}

/**
 * The budget gate: the mission has used its spend budget up, so before step `step` spends more an
 * approver is asked to raise it. Approved: the worker confirms the raise and the mission goes on;
 * denied or expired: the mission fails; withdrawn (a cancel): the loop ends it.
 */
async function budgetGate(run: MissionRun, step: number, current: SpendBudget, usedUp: string): Promise<void> {
  const raise = { spent: run.spent, budget: current, raiseTo: raisedBudget(current, run.spent) };
  run.waitingFor = 'an approver to raise the spend budget';
  const ended = await awaitGate(
    run,
    step,
    {
      tool: BUDGET_TOOL_ID,
      input: raise,
      reason: `this mission has used ${usedUp}; raise it to ${describeBudget(raise.raiseTo)}?`,
      expireMs: run.timers.expireMs,
      expiredText: 'no answer in time: the spend budget stays as it was and the mission ends',
    },
    () => checked(run),
  );
  run.gate = undefined;
  run.gateView = undefined;
  run.waitingFor = undefined;
  if (ended.value === 'approved') {
    // The worker confirms the approval (it refuses a forged one); the budget is the one the gate showed
    // the approver, never what an activity result says.
    await acts.raiseMissionBudget({ definition: run.def, gateId: ended.gateId, raise });
    run.budget = raise.raiseTo;
  } else if (ended.value === 'denied' || ended.value === 'expired') {
    run.deniedSaying = ended.reason;
    const why = ended.value === 'denied' ? `denied by ${ended.by?.identity ?? '?'} on ${ended.by?.channel ?? '?'}` : 'the gate expired';
    run.mission.send({ type: 'STEP_FAILED', reason: `the spend budget was used up (${usedUp}) and not raised: ${why}` });
  }
  checked(run);
}
