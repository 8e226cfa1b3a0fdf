/**
 * `mission.list` as the core knows it (pure, workflow-safe): the missions of the person asking —
 * those whose definition names the turn's verified sender (core/mission-owner.ts); the owner at a
 * local Trusted channel sees all. The scope is `mission.list:own` (the only kind there is): Trusted
 * holds the bare base, SemiTrusted only when the tier policy names `own`, Untrusted never.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { positiveIntField } from './fields.js';

/** The dashboard states a mission can be in (AivyxMissionState). */
export const MISSION_STATES = ['running', 'waiting', 'completed', 'failed', 'cancelled', 'expired'] as const;

/** Most missions one call lists. */
export const MISSION_LIST_MAX = 50;

/** Validated input of `mission.list`. */
export interface MissionListInput {
  state?: (typeof MISSION_STATES)[number];
  limit: number;
}

/** `mission.list`: the asker's own missions, newest first. */
export const missionListTool = defineTool({
  id: 'mission.list',
  summary: 'List the missions of the person you talk to',
  description:
    'List the missions (reminders, recurring checks) of the person you talk to, newest first: id, goal, state, what it waits for.',
  input: () =>
    z.strictObject({
      state: z.enum(MISSION_STATES).optional().describe('Only this state.'),
      limit: positiveIntField('limit', MISSION_LIST_MAX, `At most this many (default 20, at most ${MISSION_LIST_MAX}).`).optional(),
    }),
  canonical: (p): MissionListInput => ({ ...(p.state ? { state: p.state } : {}), limit: p.limit ?? 20 }),
  scope: { base: 'mission.list', qualifier: () => 'own' },
  idempotency: 'natural',
  // The owner's own missions, but a goal drafted after untrusted content may be that content's words:
  // such a mission's listing carries where the content came from (activities/tools/mission-control.ts).
  provenance: { output: 'depends', effect: false },
});

export const parseMissionListInput = missionListTool.parse;
