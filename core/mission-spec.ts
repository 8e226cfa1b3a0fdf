/**
 * Mission steps as a person (REST, `aivyx mission create`) or the model (the `mission.create`
 * tool) writes them, and their canonical definition form (machines/mission-steps.ts):
 * - `"call the bank"` — a turn step;
 * - `{ "wait": "3d" }` — wait for a duration;
 * - `{ "waitUntil": "2027-03-01T09:00", "timeZone": "Europe/Berlin" }` — wait until a local time
 *   in a time zone (or an instant with its offset, e.g. `2027-03-01T09:00:00+01:00`);
 * - `{ "notify": "renew the passport" }` — tell the mission's owner.
 * Everything is checked here, at the edge, so a bad step is refused before any workflow starts.
 */
import { z } from 'zod';
import { durationMs } from './duration.js';
import { checkTimeZone, localToInstant, LOCAL_TIME } from './local-time.js';
import { INSTANT } from './schemas.js';

/** Longest notice (characters): one Telegram message. */
export const NOTICE_MAX = 4096;

const nonEmpty = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim() !== '', 'must be a non-empty string');

/** A duration: `'90s'`, `'24h'`, `'3d'` or milliseconds. */
export const durationSpec = z.union([z.number(), z.string().max(32)]).superRefine((d, ctx) => {
  try {
    durationMs(d);
  } catch {
    ctx.addIssue({ code: 'custom', message: `must be a duration such as 90s, 24h or 3d (or milliseconds), not ${JSON.stringify(d)}` });
  }
});

const timeZone = z
  .string()
  .max(64)
  .superRefine((tz, ctx) => {
    try {
      checkTimeZone(tz);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  });

/** One step as written. */
export const missionStepSpecSchema = z.union([
  nonEmpty(100_000),
  z.strictObject({ wait: durationSpec }),
  z.strictObject({ waitUntil: z.string().max(40), timeZone: timeZone.optional() }).superRefine((s, ctx) => {
    if (INSTANT.test(s.waitUntil)) return;
    if (!LOCAL_TIME.test(s.waitUntil)) {
      ctx.addIssue({
        code: 'custom',
        path: ['waitUntil'],
        message: `must be a local time such as 2027-03-01T09:00 (with a timeZone) or an instant with its offset, not ${JSON.stringify(s.waitUntil)}`,
      });
      return;
    }
    if (s.timeZone === undefined) {
      ctx.addIssue({ code: 'custom', path: ['timeZone'], message: 'is needed with a local time (e.g. Europe/Berlin or UTC)' });
      return;
    }
    try {
      localToInstant(s.waitUntil, s.timeZone);
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['waitUntil'], message: (e as Error).message });
    }
  }),
  z.strictObject({ notify: nonEmpty(NOTICE_MAX) }),
]);

/** One step as written. */
export type MissionStepSpec = z.infer<typeof missionStepSpecSchema>;

/** A definition step (the shape of `MissionStep` in machines/mission-steps.ts). */
export type DefinedStep =
  | { text: string }
  | { kind: 'wait'; for: string | number }
  | { kind: 'wait'; until: string; timeZone?: string }
  | { kind: 'notify'; text: string };

/** The canonical definition step of a checked spec step (a local time becomes an instant with its offset). */
export function defineStep(s: MissionStepSpec): DefinedStep {
  if (typeof s === 'string') return { text: s };
  if ('wait' in s) return { kind: 'wait', for: s.wait };
  if ('notify' in s) return { kind: 'notify', text: s.notify };
  const until = INSTANT.test(s.waitUntil) ? s.waitUntil : localToInstant(s.waitUntil, s.timeZone!);
  return { kind: 'wait', until, ...(s.timeZone ? { timeZone: s.timeZone } : {}) };
}

/** A 5-field cron expression (minute hour day-of-month month day-of-week); Temporal checks the rest. */
const CRON = /^[0-9*/,A-Za-z?-]+(\s+[0-9*/,A-Za-z?-]+){4}$/;

/** When a recurring mission runs: every interval or on a cron, in a time zone, with an overlap policy. */
export const missionScheduleSpecSchema = z
  .strictObject({
    every: durationSpec.optional(),
    cron: z
      .string()
      .max(100)
      .refine((c) => CRON.test(c), 'must be a 5-field cron expression such as "0 8 * * MON"')
      .optional(),
    timeZone: timeZone.optional(),
    /** What a run due while the last one still runs does: skip it (default), wait for it, or run beside it. */
    overlap: z.enum(['skip', 'buffer-one', 'allow-all']).optional(),
    /** How late a missed run may still start (after the server was down); default 1 minute. */
    catchupWindow: durationSpec.optional(),
    paused: z.boolean().optional(),
  })
  .superRefine((s, ctx) => {
    if ((s.every === undefined) === (s.cron === undefined))
      ctx.addIssue({ code: 'custom', message: 'needs exactly one of "every" (e.g. 7d) and "cron" (e.g. "0 8 * * MON")' });
    if (s.every !== undefined && durationSpec.safeParse(s.every).success && durationMs(s.every) < 60_000)
      ctx.addIssue({ code: 'custom', path: ['every'], message: 'must be at least 1m' });
  });

/** A recurring mission's schedule as written. */
export type MissionScheduleSpec = z.infer<typeof missionScheduleSpecSchema>;
