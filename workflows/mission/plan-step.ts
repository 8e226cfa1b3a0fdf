/**
 * A plan step. First run: the model drafts the plan (checked by the worker), and the step
 * "escalates" with it, so the plan gate shows the whole plan before anything runs. Run with the
 * gate's grant: the worker builds and attests the planned mission from exactly the approved plan,
 * and it runs as a child (its own steps, gates and audit trail); a cancel here is passed on to it.
 */
import { condition, startChild, type ChildWorkflowHandle } from '@temporalio/workflow';
import type { TurnOutcome } from '../../core/outcomes.js';
import type { StepGrant } from '../../machines/index.js';
import { cancelMissionSignal, missionStartMetadata, plannedMissionId, PLAN_TOOL_ID, type MissionResult } from '../mission-messages.js';
import { acts, planning } from './activities.js';
import type { MissionRun, MissionWorkflow } from './state.js';
import { publish } from './view.js';

/** Runs a plan step (drafting, or the approved plan as a child mission), counts it and records its end. */
export async function runPlanStep(
  run: MissionRun,
  step: number,
  attempt: number,
  grant: StepGrant | undefined,
  // Passed in: the workflow's own module imports this one.
  missionWorkflow: MissionWorkflow,
): Promise<TurnOutcome> {
  const outcome = grant ? await runPlan(run, step, grant, missionWorkflow) : await draftPlan(run, step);
  run.countStep();
  await run.auditStepTurnEnd({
    type: 'MissionStepFinished',
    step,
    attempt,
    stepTurnId: plannedMissionId(run.missionId),
    outcome: outcome.status,
  });
  return outcome;
}

/** The model drafts the plan; the step escalates with it, so the plan gate shows all of it. */
async function draftPlan(run: MissionRun, step: number): Promise<TurnOutcome> {
  const drafted = await planning.draftMissionPlan({ definition: run.def, step });
  if (!drafted.ok) return { status: 'Failed', error: { kind: 'InvalidScope', message: drafted.reason }, toolCallsMade: 0 };
  run.pendingPlan = drafted.plan;
  return {
    status: 'Escalated',
    reason: 'the plan needs approval before any of it runs',
    pendingTool: PLAN_TOOL_ID,
    pendingInput: drafted.plan,
    toolCallsMade: 0,
  };
}

/** Runs the approved plan as a child mission until it ends (a cancel of this mission is passed on to it). */
async function runPlan(run: MissionRun, step: number, grant: StepGrant, missionWorkflow: MissionWorkflow): Promise<TurnOutcome> {
  const planned = await acts.adoptMissionPlan({ definition: run.def, step, grant, plan: run.pendingPlan });
  run.pendingPlan = undefined;
  const childId = planned.definition.missionId;
  let child: ChildWorkflowHandle<MissionWorkflow>;
  try {
    child = await startChild(missionWorkflow, {
      workflowId: childId,
      args: [{ ...planned, ...(run.args.dashboard ? { dashboard: true } : {}) }],
      ...missionStartMetadata(planned.definition),
    });
  } catch (e) {
    // Its id already taken (someone started a workflow under it first): the plan does not run; the mission ends cleanly.
    const why = e instanceof Error ? e.message : String(e);
    return failed(`the planned mission ${childId} could not start: ${why}`);
  }
  run.waitingFor = `the planned mission ${childId}`;
  publish(run);
  const end = await childEnd(run, child);
  run.waitingFor = undefined;
  publish(run);
  if ('state' in end && end.state === 'completed') return { status: 'Completed', finalMessage: '', toolCallsMade: 0, durationMs: 0 };
  const why = 'state' in end ? `${end.state}${end.reason ? `: ${end.reason}` : ''}` : end.failure;
  return failed(`the planned mission ${childId} ended ${why}`);
}

/** Waits for the child mission to end; a cancel of this mission is passed on to it first. */
async function childEnd(run: MissionRun, child: ChildWorkflowHandle<MissionWorkflow>): Promise<MissionResult | { failure: string }> {
  let ended: MissionResult | { failure: string } | undefined;
  child.result().then(
    (r) => (ended = r),
    (e: unknown) => (ended = { failure: e instanceof Error ? e.message : String(e) }),
  );
  await condition(() => ended !== undefined || run.cancelled() !== undefined);
  const c = run.cancelled();
  if (!ended && c) {
    await child.signal(cancelMissionSignal, { reason: c.reason });
    await condition(() => ended !== undefined);
  }
  return ended!;
}

const failed = (message: string): TurnOutcome => ({ status: 'Failed', error: { kind: 'Internal', message }, toolCallsMade: 0 });
