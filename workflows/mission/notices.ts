/**
 * How a gate ended goes to its approvers while the mission moves on: the notice is news, not a step
 * the mission waits for (a round trip off every decision). The mission still ends, or continues as
 * new, only once every notice went out; a notice that could not be sent fails the mission before its
 * next step starts (or at its end), where it used to fail it at the gate.
 */
import { patched } from '@temporalio/workflow';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { GATE_OUTCOME_TOLD_ALONGSIDE } from '../patches.js';
import { acts } from './activities.js';
import type { MissionRun } from './state.js';

/** Sends a gate's outcome notice beside the mission's next step (awaited, for runs from before that). */
export async function tellOutcome(run: MissionRun, notice: MissionNotice): Promise<void> {
  if (!patched(GATE_OUTCOME_TOLD_ALONGSIDE)) return acts.notifyApprovers(notice);
  run.telling.push(
    acts.notifyApprovers(notice).catch((err: unknown) => {
      run.tellFailure ??= err;
    }),
  );
}

/** Fails the mission if a notice sent alongside could not be sent. */
export function throwIfNoticeFailed(run: MissionRun): void {
  if (run.tellFailure !== undefined) throw run.tellFailure;
}

/** Waits for every notice on its way; fails the mission if one could not be sent. */
export async function noticesSent(run: MissionRun): Promise<void> {
  await Promise.all(run.telling.splice(0));
  throwIfNoticeFailed(run);
}
