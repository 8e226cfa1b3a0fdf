/**
 * The mission workflow's activities: one factory per concern in `mission/`, over one shared context
 * (`mission/context.ts`), composed here. Authority first (DESIGN.md D5): `openMission` checks the
 * definition's proof and claims it for this run (or takes it over from the verified run this one
 * continues); every later step — attesting a step turn, opening a gate, checking a decision, handing
 * over to the next run — works only for the run that holds that claim, and builds what it attests
 * from the verified definition, never from what the workflow hands it. Audit appends are keyed by
 * `activityKey()` when the activity is remote and by what they record when it is local (`missionEntryKey`);
 * notifications are best-effort and deduplicated by the notifier.
 */
import { attestActivities } from './mission/attest.js';
import { createMissionContext } from './mission/context.js';
import { gateActivities } from './mission/gates.js';
import { notifyActivities } from './mission/notify.js';
import { openMissionActivities } from './mission/open-mission.js';
import { planStepActivities } from './mission/plan-step.js';
import { recordActivities } from './mission/records.js';
import type { MissionActivityDeps } from './mission/types.js';
import { waitActivities } from './mission/waits.js';

export type * from './mission/types.js';
export type { MissionAuditEvent } from './mission/context.js';
export { missionEntryKey } from './mission/context.js';
export { streamMissionNotifier, type MissionNotice, type MissionNotifier } from './mission/notice.js';
export { scheduledRunMissionId } from './mission/open-mission.js';

/** Builds the mission activities. */
export function createMissionActivities(deps: MissionActivityDeps) {
  const ctx = createMissionContext(deps);
  return {
    ...planStepActivities(ctx),
    ...openMissionActivities(ctx),
    ...attestActivities(ctx),
    ...gateActivities(ctx),
    ...waitActivities(ctx),
    ...notifyActivities(ctx),
    ...recordActivities(ctx),
  };
}

/** The activity object a worker registers for missions. */
export type MissionActivities = ReturnType<typeof createMissionActivities>;
