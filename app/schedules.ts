/**
 * The Schedules' own record of the runs they started, for `instantiateScheduledRun`: a run counts
 * only when its schedule's recent (or running) actions name exactly this workflow id and first run
 * id. The scheduler records an action just after starting it, so a fresh run asks a few times.
 */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { ScheduleRecordPort } from '../activities/mission-activities.js';

/** How long a run waits for its schedule to record starting it. */
const RECORD_WAIT_MS = 10_000;
/** How far a schedule's creation may lie from its template's signature (the gateway signs, then creates). */
export const CREATE_SKEW_MS = 5 * 60_000;

/** Reads schedules over the Temporal client; `skewMs` is for tests. */
export function createScheduleRecords(client: Client, skewMs = CREATE_SKEW_MS): ScheduleRecordPort {
  return {
    async refusal(scheduleId, workflowId, runId, signedAt) {
      const until = Date.now() + RECORD_WAIT_MS;
      for (;;) {
        let info;
        try {
          info = (await client.schedule.getHandle(scheduleId).describe()).info;
        } catch (err) {
          if (err instanceof ScheduleNotFoundError) return `schedule ${scheduleId} does not exist`;
          throw err;
        }
        if (Math.abs(info.createdAt.getTime() - signedAt) > skewMs)
          return `schedule ${scheduleId} was created at ${info.createdAt.toISOString()}, not when its template was signed (a re-created schedule runs nothing)`;
        const actions = [...info.recentActions.map((a) => a.action), ...info.runningActions];
        if (actions.some((a) => a.workflow.workflowId === workflowId && a.workflow.firstExecutionRunId === runId)) return undefined;
        if (Date.now() > until) return `schedule ${scheduleId} did not start ${workflowId} (a copied template runs nothing)`;
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
