/**
 * `mission.create` as the core knows it (pure, workflow-safe): the model drafts a mission — a goal
 * and its steps (turns, waits, notices; core/mission-spec.ts) and the capabilities its turn steps
 * may use — and the owner approves it once (confirm-first: the approver sees every step, wait and
 * capability). The scope is `mission.create:<kind>`: `notify` for a mission of waits and notices
 * only (a reminder: it runs no tools), `turns` when a step runs the model; Trusted holds the bare
 * base, and a tier policy can grant less.
 */
import { z } from 'zod';
import { Scope } from '../capability/scope.js';
import {
  missionScheduleSpecSchema,
  missionStepSpecSchema,
  noticeCapabilities,
  type MissionScheduleSpec,
  type MissionStepSpec,
} from '../mission-spec.js';
import { defineTool, fieldError } from './define-tool.js';
import { textField } from './fields.js';

/** Validated input of `mission.create`. */
export interface MissionCreateInput {
  goal: string;
  steps: MissionStepSpec[];
  /** Canonical scopes the mission's turn steps may use (none: a reminder). */
  capabilities: string[];
  /** Makes it recurring: each run (every interval, or on the cron, in the zone) is a mission of its own. */
  schedule?: MissionScheduleSpec;
}

/** Most steps a drafted mission may have. */
export const MISSION_MAX_STEPS = 50;

/** Whether a mission of these steps runs the model (a turn step) or only waits and notifies. */
export const missionKind = (steps: readonly MissionStepSpec[]): 'turns' | 'notify' =>
  steps.some((s) => typeof s === 'string') ? 'turns' : 'notify';

/** `mission.create`: start a mission the owner approves first. */
export const missionCreateTool = defineTool({
  id: 'mission.create',
  summary: 'Schedule a reminder, recurring check or follow-up (the owner approves)',
  // The step forms are in the schema: the description says only what it cannot (formats, the reminder shape).
  description:
    'Start a mission the owner approves first. Steps run in order; a string step is a task for you. Durations like "3d"; ' +
    'waitUntil is local time ("2027-03-01T09:00") in timeZone; notify "to" like ["email:bob@x.org"]. ' +
    'A reminder: [{waitUntil, timeZone}, {notify}]. Returns {missionId} or {scheduleId}.',
  input: () =>
    z.strictObject({
      goal: textField('goal', 500, 'One sentence.'),
      steps: z.array(missionStepSpecSchema).min(1).max(MISSION_MAX_STEPS).describe('In order.'),
      capabilities: z
        .array(z.string().max(2048))
        .max(32)
        .optional()
        .describe('Scopes task steps may use, e.g. "fs.read:/home/me/notes/**".'),
      schedule: missionScheduleSpecSchema
        .optional()
        .describe('Recurring: {"cron": "0 8 * * MON", "timeZone": "Europe/Berlin"} or {"every": "7d"}.'),
    }),
  canonical: (p): MissionCreateInput => {
    const capabilities = (p.capabilities ?? []).map((c) => {
      try {
        return Scope.parse(c).toString();
      } catch (e) {
        throw fieldError(`"capabilities" holds "${c}", which is not a scope: ${(e as Error).message}`, 'e.g. fs.read:/home/me/notes/**');
      }
    });
    if (capabilities.length > 0 && missionKind(p.steps) === 'notify')
      throw fieldError('"capabilities" are for task steps; this mission only waits and notifies', 'omit "capabilities"');
    // Notices to other people need what channel.send would: added here, so the approver sees them and the asker must hold them.
    const all = [...new Set([...capabilities, ...noticeCapabilities(p.steps)])];
    return { goal: p.goal, steps: p.steps, capabilities: all, ...(p.schedule ? { schedule: p.schedule } : {}) };
  },
  scope: { base: 'mission.create', qualifier: (i) => missionKind(i.steps) },
  idempotency: 'keyed',
  confirmFirst: true,
  // A wait's time decides when the mission goes on, not who is told, what runs or who approves: a
  // reminder the owner asked for may fire on a date read from a page. Every other part of a step
  // (a notice's text and recipients, a turn step's task, an event to wait for), the capabilities and
  // a recurring schedule carry authority.
  provenance: { output: 'trusted', effect: true, contentFields: ['goal', 'steps[].wait', 'steps[].waitUntil', 'steps[].timeZone'] },
});

export const parseMissionCreateInput = missionCreateTool.parse;
