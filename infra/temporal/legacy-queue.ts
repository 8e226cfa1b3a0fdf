/**
 * Before task queues were named after the install (issue 32) every install used `aivyx`. Workflows
 * started then (an open session, a mission waiting at a gate for days) and Schedules created then keep
 * that queue for life, so an upgraded install also polls it while any such work remains — only on its
 * own dev server, whose data lives in its own data directory (on a shared cluster whose work is on
 * `aivyx` cannot be told apart: there, AIVYX_TASK_QUEUE=aivyx keeps the old queue; docs/DEPLOY.md).
 */
import type { Client } from '@temporalio/client';

/** The task queue every install used before queues were named after the install. */
export const LEGACY_TASK_QUEUE = 'aivyx';

/** The work in the client's namespace still bound to the legacy queue: running workflows and Schedules. */
export async function legacyQueueWork(client: Client): Promise<{ running: number; schedules: number }> {
  const { count } = await client.workflow.count(`TaskQueue = "${LEGACY_TASK_QUEUE}" AND ExecutionStatus = "Running"`);
  let schedules = 0;
  for await (const summary of client.schedule.list()) {
    const { action } = await client.schedule.getHandle(summary.scheduleId).describe();
    if (action.type === 'startWorkflow' && action.taskQueue === LEGACY_TASK_QUEUE) schedules++;
  }
  return { running: count, schedules };
}
