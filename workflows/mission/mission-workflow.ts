/**
 * `missionWorkflow`: hosts the mission machine. Each step runs by its kind (turn-step.ts: a child
 * `turnWorkflow`; plan-step.ts; quiet-steps.ts: waits and notices); a step that ends `Escalated` opens
 * a gate (gates.ts, the gate machine) for exactly its pending call. A gate is decided only by the
 * `approveGate`/`denyGate` Updates (handlers.ts) — never by a tool call, so the model can never
 * approve. Reminder, escalation and expiry are durable timers; the machines never read a clock.
 * What the run holds is one `MissionRun` (state.ts). See docs/MISSIONS.md.
 */
import { allHandlersFinished, ApplicationFailure, CancellationScope, condition, patched, workflowInfo } from '@temporalio/workflow';
import { spendFields, spentAnything } from '../../core/spend.js';
import { isTurnStep } from '../../machines/index.js';
import type { MissionArgs, MissionResult } from '../mission-messages.js';
import { admitMissionArgs } from '../inputs.js';
import { MISSION_BOOKKEEPING_LOCAL } from '../patches.js';
import { acts, localBookkeeping, type MissionBookkeeping } from './activities.js';
import { heldByBudget } from './budget.js';
import { continueMission, dueToContinue } from './continue-as-new.js';
import { answerWhileVerifying, handleMessages } from './handlers.js';
import { noticesSent, throwIfNoticeFailed } from './notices.js';
import { runPlanStep } from './plan-step.js';
import { runQuietStep } from './quiet-steps.js';
import { machineFailure } from './restore.js';
import { checkDefinition, MissionRun } from './state.js';
import { runTurnStep, seededOutcome, settleStep } from './turn-step.js';
import { checked, publish } from './view.js';

// Clients (channels, tests) take the messages from beside the workflow.
export * from '../mission-messages.js';
export { GATE_DEFAULTS } from './state.js';

/** The mission workflow: runs every step to the end, waiting durably at gates; continues-as-new with the persisted snapshot. */
export async function missionWorkflow(input: MissionArgs): Promise<MissionResult> {
  // A refused or malformed definition fails now (audited, non-retryably); a forged or copied one fails in openMission.
  const args = await admitMissionArgs(input);
  const timers = checkDefinition(args.definition);
  answerWhileVerifying(args);
  // Missions started before the bookkeeping went local replay with it remote.
  const books: MissionBookkeeping = patched(MISSION_BOOKKEEPING_LOCAL) ? localBookkeeping : acts;
  // Authority before anything else: nothing of a mission runs unless the worker verified its definition.
  const opened = await books.openMission({
    args,
    ...(workflowInfo().continuedFromExecutionRunId ? { continuedFromRunId: workflowInfo().continuedFromExecutionRunId } : {}),
    ...(workflowInfo().parent ? { parentId: workflowInfo().parent!.workflowId } : {}),
  });
  if (!opened.ok)
    throw ApplicationFailure.create({ type: 'CapabilityDenied', nonRetryable: true, message: `mission refused: ${opened.reason}` });
  const run = new MissionRun(args, timers, books, opened.budget);
  handleMessages(run);
  return CancellationScope.nonCancellable(() => runMission(run));
}

/** Runs steps until the mission machine is done (or continues as new on the way), then ends the mission. */
async function runMission(run: MissionRun): Promise<MissionResult> {
  const { mission } = run;
  publish(run);
  if (!run.args.carried) {
    mission.send({ type: 'START' });
    checked(run);
  }
  while (mission.getSnapshot().status === 'active') {
    throwIfNoticeFailed(run);
    if (run.cancelled()) {
      mission.send({ type: 'CANCEL' });
      checked(run);
      break;
    }
    const state = mission.getSnapshot().value;
    if (state !== 'running') throw machineFailure('mission', `unexpected state ${String(state)} outside a gate`);
    if (dueToContinue(run)) return continueMission(run);
    await runStep(run);
  }
  return endMission(run);
}

/** Runs the mission's current step by its kind, and moves the mission on from how it ended. */
async function runStep(run: MissionRun): Promise<void> {
  const { step, attempt, grant } = run.mission.getSnapshot().context;
  const stepDef = run.def.steps[step];
  if (await heldByBudget(run, step, stepDef)) return;
  if (stepDef && !isTurnStep(stepDef) && stepDef.kind !== 'plan' && !run.seeded) return runQuietStep(run, step, attempt, stepDef);
  // Whether a child's result (in the history) decided this outcome, rather than the definition's seed.
  const fromChild = !run.seeded;
  const outcome = run.seeded
    ? await seededOutcome(run, step, attempt)
    : stepDef?.kind === 'plan'
      ? await runPlanStep(run, step, attempt, grant, missionWorkflow)
      : await runTurnStep(run, step, attempt, grant);
  await settleStep(run, step, outcome, fromChild);
}

/** The mission's result, once every notice went out; its end audited (a cancel's reason is a person's text: not audited). */
async function endMission(run: MissionRun): Promise<MissionResult> {
  const end = run.mission.getSnapshot();
  const { failure } = end.context;
  const cancelled = run.cancelled();
  const result: MissionResult = {
    missionId: run.missionId,
    state: end.value as MissionResult['state'],
    stepsRun: run.stepsRun,
    ...(spentAnything(run.spent) ? { spent: run.spent } : {}),
    ...(failure
      ? { reason: `${failure}${run.deniedSaying ? `: ${run.deniedSaying}` : ''}` }
      : cancelled
        ? { reason: cancelled.reason }
        : {}),
  };
  await noticesSent(run);
  publish(run);
  // The audit gets only the mission's own (system) failure reason.
  await run.audit({
    type: 'MissionEnded',
    state: result.state,
    ...(failure ? { reason: failure } : {}),
    ...(spentAnything(run.spent) ? spendFields(run.spent) : {}),
  });
  await condition(allHandlersFinished);
  return result;
}
