/**
 * `scheduledMissionWorkflow`: what a recurring mission's Temporal Schedule starts each time. It
 * holds no authority of its own: an activity checks the template's proof (purpose
 * `mission-schedule`, bound to the schedule id), that the Schedule itself started this very run
 * (its recent actions name this workflow id and first run id), and claims the run once; only then
 * does the worker attest the run's own mission — the template under a mission id derived from the
 * run — which runs as a child `missionWorkflow` with its own audit entries. A copied template
 * started by hand under a made-up id runs nothing.
 */
import { ACTIVITY_POLICIES } from '../core/activity-policies.js';
import { ApplicationFailure, executeChild, proxyActivities } from '@temporalio/workflow';
import type { MissionActivities } from '../activities/mission-activities.js';
import { admitScheduledMissionArgs } from './inputs.js';
import type { MissionResult, ScheduledMissionArgs } from './mission-messages.js';
import { missionWorkflow } from './mission/mission-workflow.js';

const acts = proxyActivities<MissionActivities>(ACTIVITY_POLICIES.mission);

/** One run of a recurring mission. */
export async function scheduledMissionWorkflow(input: ScheduledMissionArgs): Promise<MissionResult> {
  const args = await admitScheduledMissionArgs(input);
  const run = await acts.instantiateScheduledRun(args);
  if (!run.ok)
    throw ApplicationFailure.create({ type: 'CapabilityDenied', nonRetryable: true, message: `scheduled run refused: ${run.reason}` });
  return executeChild(missionWorkflow, { workflowId: run.args.definition.missionId, args: [run.args] });
}
