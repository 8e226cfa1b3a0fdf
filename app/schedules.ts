/**
 * The Schedules' own record of the runs they started, for `instantiateScheduledRun`: a run counts
 * only when its schedule's recent (or running) actions name exactly this workflow id and first run
 * id. The scheduler records an action just after starting it, so a fresh run asks a few times.
 */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { ScheduleRecordPort } from '../activities/mission-activities.js';

/** How long a run waits for its schedule to record starting it. */
const RECORD_WAIT_MS = 10_000;

/** Reads schedules over the Temporal client. */
export function createScheduleRecords(client: Client): ScheduleRecordPort {
  return {
    async started(scheduleId, workflowId, runId) {
      const until = Date.now() + RECORD_WAIT_MS;
      for (;;) {
        let info;
        try {
          info = (await client.schedule.getHandle(scheduleId).describe()).info;
        } catch (err) {
          if (err instanceof ScheduleNotFoundError) return false;
          throw err;
        }
        const actions = [...info.recentActions.map((a) => a.action), ...info.runningActions];
        if (actions.some((a) => a.workflow.workflowId === workflowId && a.workflow.firstExecutionRunId === runId)) return true;
        if (Date.now() > until) return false;
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
