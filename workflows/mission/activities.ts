/** The activities a mission schedules: remote ones, the local bookkeeping on its way to a gate, and the plan's model step. */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { MissionActivities } from '../../activities/mission-activities.js';
import { ACTIVITY_POLICIES, LOCAL_ACTIVITY_POLICIES } from '../../core/activity-policies.js';

/** Every mission activity, scheduled through the server. */
export const acts = proxyActivities<MissionActivities>(ACTIVITY_POLICIES.mission);

/** The bookkeeping on a mission's way to its gate: quick, idempotent by key, no task through the server. */
export type MissionBookkeeping = Pick<MissionActivities, 'openMission' | 'attestStepTurn' | 'openGate' | 'recordMissionEvent'>;

/**
 * The bookkeeping as local activities (docs/IDEMPOTENCY.md): their entries are keyed by what they
 * record (missionEntryKey), not by sequence number, which a failed workflow task's retry may give to
 * another command (an Update that arrived meanwhile schedules one). Local also means no pending
 * activity for anyone to complete.
 */
export const localBookkeeping = proxyLocalActivities<MissionBookkeeping>(LOCAL_ACTIVITY_POLICIES.mission);

/** Drafting a plan is a model step: the LLM policy (heartbeats, minutes not seconds). */
export const planning = proxyActivities<Pick<MissionActivities, 'draftMissionPlan'>>(ACTIVITY_POLICIES.llm);
