/**
 * A mission as a person gives it (a REST body, `aivyx mission create FILE.json`): the schema, its
 * parser (a `Config` error naming each bad field) and the approver list form. The mission gateway
 * turns a spec into a definition; this file is what a channel needs to check one.
 */
import { z } from 'zod';
import { AivyxError } from '../core/errors.js';
import { durationSpec, missionScheduleSpecSchema, missionStepSpecSchema } from '../core/mission-spec.js';
import { spendBudgetSchema } from '../core/spend.js';
import type { GateApprover, GateApproverRef } from '../machines/index.js';
import { parseBody } from './zod-errors.js';

/** The approver behind CLI/REST approvals. */
export const LOCAL_APPROVER: GateApprover = { identity: 'local-user', channel: 'cli', trustTier: 'Trusted' };

const nonEmpty = z.string().refine((s) => s.trim() !== '', 'must be a non-empty string');

/** A gate timer: `'90s'`, `'24h'`, `'3d'` or milliseconds (what the mission workflow accepts). */
const duration = durationSpec;

const approverList = z.array(z.string()).superRefine((list, ctx) => {
  try {
    parseApprovers(list);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: e instanceof AivyxError ? `${e.message} (${e.hint ?? ''})` : String(e) });
  }
});

/** What a person gives to create a mission (REST body, `mission create FILE.json`); the rest is filled in. */
export const missionSpecSchema = z
  .object({
    goal: nonEmpty,
    /** Defaults to one step: the goal. Turn steps, waits and notices (core/mission-spec.ts). */
    steps: z.array(missionStepSpecSchema).max(100).optional(),
    /**
     * Approvers as `identity` (on the `cli` channel) or `channel:identity`, e.g. `telegram:123456`
     * or `email:alice@example.com`; default `local-user`. Second approvers likewise.
     */
    approvers: approverList.optional(),
    secondApprovers: approverList.optional(),
    escalateAfter: duration.optional(),
    reminderAfter: duration.optional(),
    expireAfter: duration.optional(),
    onExpire: z.enum(['fail', 'skip-step']).optional(),
    /** Its spend budget, `{ tokens?, costUsd? }` (docs/BUDGETS.md); default the worker's AIVYX_MISSION_*_BUDGET. */
    budget: spendBudgetSchema.optional(),
    /** Makes it a recurring mission: each run is a mission of its own (core/mission-spec.ts). */
    schedule: missionScheduleSpecSchema.optional(),
    /** Start from the goal alone: the model plans the steps, and the plan is approved before any of it runs. */
    plan: z.boolean().optional(),
    /**
     * What its task steps may use, e.g. `["fs.read:/home/me/notes/**"]` (`[]`: nothing — a reminder): each
     * a scope the assistant itself holds; default the assistant's whole set. It can only narrow.
     */
    capabilities: z.array(z.string().max(2048)).max(32).optional(),
  })
  .strict()
  .refine((s) => !(s.plan && s.steps && s.steps.length > 0), { message: 'give "steps" or "plan": true, not both', path: ['plan'] });

/** What a person gives to create a mission; the rest is filled in. */
export type MissionSpec = z.infer<typeof missionSpecSchema>;

/** Validates a mission spec from outside (throws `Config` naming each bad field). */
export function parseMissionSpec(input: unknown): MissionSpec {
  return parseBody(
    missionSpecSchema,
    input,
    'mission',
    'fields: goal, schedule ({every: "7d"} or {cron: "0 8 * * MON", timeZone}), steps ("text", {wait: "3d"}, {waitUntil: "2027-03-01T09:00", timeZone: "Europe/Berlin"}, {notify: "text"}), approvers, secondApprovers, escalateAfter, reminderAfter, expireAfter (90s, 24h, 3d), onExpire (fail, skip-step), budget ({tokens, costUsd}), plan, capabilities (scopes the assistant holds; [] for a reminder)',
  );
}

const APPROVER = /^(?:([a-z][a-z0-9_-]{0,31}):)?(\S{1,200})$/;

/** `identity` or `channel:identity` → approver refs (identity alone means the `cli` channel). */
export function parseApprovers(list: readonly string[]): GateApproverRef[] {
  return list.map((entry) => {
    const m = typeof entry === 'string' ? APPROVER.exec(entry.trim()) : null;
    if (!m?.[2])
      throw new AivyxError('Config', `"${String(entry)}" is not an approver`, {
        hint: 'write an identity (local-user) or channel:identity (telegram:123456, email:alice@example.com)',
      });
    return { identity: m[2], channel: m[1] ?? LOCAL_APPROVER.channel };
  });
}
