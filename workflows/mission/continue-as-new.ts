/**
 * A long mission continues as new before its history grows too long (Temporal's suggestion, or the
 * run's own limit), carrying the mission machine's persisted snapshot and its counters; the worker
 * attests the carry, so a copy of these arguments started fresh proves nothing.
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { spentAnything } from '../../core/spend.js';
import type { MissionCarry } from '../mission-messages.js';
import { acts } from './activities.js';
import { noticesSent } from './notices.js';
import type { MissionRun, MissionWorkflow } from './state.js';

/** True once this run has made progress (a step) and its history is long enough to start afresh. */
export function dueToContinue(run: MissionRun): boolean {
  const info = workflowInfo();
  return run.stepsThisRun > 0 && (info.continueAsNewSuggested || info.historyLength > run.historyLimit);
}

/** Continues as new once every handler finished and every notice went out (never returns). */
export async function continueMission(run: MissionRun): Promise<never> {
  await condition(allHandlersFinished);
  await noticesSent(run);
  const carried: MissionCarry = {
    snapshot: run.mission.getPersistedSnapshot(),
    gateSeq: run.gateSeq,
    stepsRun: run.stepsRun,
    ...(run.pendingPlan !== undefined ? { plan: run.pendingPlan } : {}),
    ...(run.budget ? { budget: run.budget } : {}),
    ...(spentAnything(run.spent) ? { spent: run.spent } : {}),
  };
  // The next run proves it continues this verified one (a copy of these arguments started fresh proves nothing).
  const continuation = await acts.attestContinuation({ definition: run.def, carried });
  return continueAsNew<MissionWorkflow>({ ...run.args, carried, continuation });
}
