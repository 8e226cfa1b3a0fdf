/**
 * `mission.cancel` as the core knows it (pure, workflow-safe): cancels one mission of the person
 * asking (core/mission-owner.ts) — its open gate is withdrawn and nothing more of it runs. An effect
 * that cannot be taken back, so confirm-first: the approver sees which mission. Scope
 * `mission.cancel:own`: Trusted holds the bare base, SemiTrusted only when the tier policy names `own`.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { patternField, textField } from './fields.js';

/** What a mission id looks like (channels/mission-gateway.ts checks the same). */
export const MISSION_ID_PATTERN = /^mission-[A-Za-z0-9-]{1,80}$/;

/** Validated input of `mission.cancel`. */
export interface MissionCancelInput {
  missionId: string;
  reason?: string;
}

/** `mission.cancel`: cancel one of the asker's own missions. */
export const missionCancelTool = defineTool({
  id: 'mission.cancel',
  description: 'Cancel a mission of the person you talk to (ids from mission.list); no further step runs.',
  input: () =>
    z.strictObject({
      missionId: patternField('missionId', MISSION_ID_PATTERN, 'must be a mission id', 'e.g. mission-3f2a…', 'see mission.list'),
      reason: textField('reason', 200, 'Why, in a few words.').optional(),
    }),
  canonical: (p): MissionCancelInput => ({ missionId: p.missionId, ...(p.reason ? { reason: p.reason } : {}) }),
  scope: { base: 'mission.cancel', qualifier: () => 'own' },
  // Cancelling a cancelled mission is cancelling it once (a retried call finds it cancelled).
  idempotency: 'natural',
  confirmFirst: true,
  provenance: { output: 'trusted', effect: true, contentFields: ['reason'] },
});

export const parseMissionCancelInput = missionCancelTool.parse;
