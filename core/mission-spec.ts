/**
 * Mission steps as a person (REST, `aivyx mission create`) or the model (the `mission.create`
 * tool) writes them, and their canonical definition form (machines/mission-steps.ts):
 * - `"call the bank"` — a turn step;
 * - `{ "wait": "3d" }` — wait for a duration;
 * - `{ "waitUntil": "2027-03-01T09:00", "timeZone": "Europe/Berlin" }` — wait until a local time
 *   in a time zone (or an instant with its offset, e.g. `2027-03-01T09:00:00+01:00`);
 * - `{ "notify": "renew the passport" }` — tell the mission's owner (or, with `"to": ["telegram:123",
 *   "email:bob@example.com"]`, those people: the mission needs `channel.send:<channel>` for each);
 * - `{ "waitFor": { "email": { "from": "bob@example.com", "thread": "<id@host>" } }, "within": "5d",
 *   "onEvent": "end", "onTimeout": "continue" }` — wait for an inbound event (an e-mail, or
 *   `{ "telegram": { "from": "@bob", "contains": "done" } }`, or
 *   `{ "matrix": { "from": "@bob:example.org", "room": "!abc:example.org", "contains": "done" } }`, or
 *   `{ "approval": "Send the nudge?" }`: a
 *   yes from an approver), at most `within`; each outcome goes on
 *   with the next step or ends the mission (defaults: an event continues, a timeout ends).
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
export const durationSpec = z.lazy(() =>
  z.union([z.number(), z.string().max(32)]).superRefine((d, ctx) => {
    try {
      durationMs(d);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be a duration such as 90s, 24h or 3d (or milliseconds), not ${JSON.stringify(d)}` });
    }
  }),
);

const timeZone = z.lazy(() =>
  z
    .string()
    .max(64)
    .superRefine((tz, ctx) => {
      try {
        checkTimeZone(tz);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
);

/** A notice's recipient as written: a channel name (as `channel.send` takes it), a colon, the channel's own address. */
const RECIPIENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}:\S{1,320}$/;
const EMAIL_ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;
const MESSAGE_ID = /^<?[^\s<>]+@[^\s<>]+>?$/;
const TELEGRAM_FROM = /^(\d{1,20}|@[A-Za-z0-9_]{4,32})$/;
/** A Matrix user id (`@localpart:server[:port]`): what the homeserver puts in an event's sender. */
export const MATRIX_USER_ID = /^@[^\s:]{1,255}:[A-Za-z0-9.-]{1,255}(:\d{1,5})?$/;
/** A Matrix room id: `!opaque:server[:port]`, or since room version 12 `!<hash>` with no server part. */
export const MATRIX_ROOM_ID = /^![^\s:]{1,255}(:[A-Za-z0-9.-]{1,255}(:\d{1,5})?)?$/;
/** What a wait's outcome does: go on with the next step, or end the mission (a refinement, so a union names the field). */
const branch = z.lazy(() =>
  z
    .string()
    .max(16)
    .refine((b) => b === 'continue' || b === 'end', 'must be "continue" or "end"'),
);
type Branch = 'continue' | 'end';

/** One step as written. */
export const missionStepSpecSchema = z.lazy(() =>
  z.union([
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
    z.strictObject({
      notify: nonEmpty(NOTICE_MAX),
      to: z
        .array(
          z
            .string()
            .max(400)
            .refine((r) => RECIPIENT.test(r), 'must be "<channel>:<address>", e.g. telegram:123456789 or email:bob@example.com'),
        )
        .min(1)
        .max(20)
        .optional(),
    }),
    z.strictObject({
      waitFor: z.union([
        z.strictObject({
          email: z.strictObject({
            from: z
              .string()
              .max(320)
              .refine((a) => EMAIL_ADDRESS.test(a), 'must be an e-mail address such as bob@example.com'),
            thread: z
              .string()
              .max(998)
              .refine((t) => MESSAGE_ID.test(t), 'must be a Message-ID such as <abc@example.com>')
              .optional(),
          }),
        }),
        z.strictObject({
          telegram: z
            .strictObject({
              from: z
                .string()
                .max(64)
                .refine((f) => TELEGRAM_FROM.test(f), 'must be a Telegram user id (digits) or an @username')
                .optional(),
              contains: nonEmpty(200).optional(),
            })
            .refine((t) => t.from !== undefined || t.contains !== undefined, 'needs "from" or "contains"'),
        }),
        z.strictObject({
          matrix: z
            .strictObject({
              from: z
                .string()
                .max(320)
                .refine((f) => MATRIX_USER_ID.test(f), 'must be a Matrix user id such as @bob:example.org (never a display name)')
                .optional(),
              room: z
                .string()
                .max(320)
                .refine((r) => MATRIX_ROOM_ID.test(r), 'must be a Matrix room id such as !abc:example.org')
                .optional(),
              contains: nonEmpty(200).optional(),
            })
            .refine((m) => m.from !== undefined || m.contains !== undefined, 'needs "from" or "contains"'),
        }),
        z.strictObject({ approval: nonEmpty(2000) }),
      ]),
      within: durationSpec,
      onEvent: branch.optional(),
      onTimeout: branch.optional(),
    }),
  ]),
);

/** One step as written. */
export type MissionStepSpec = z.infer<typeof missionStepSpecSchema>;

/** A definition step (the shape of `MissionStep` in machines/mission-steps.ts). */
export type DefinedStep =
  | { text: string }
  | { kind: 'wait'; for: string | number }
  | { kind: 'wait'; until: string; timeZone?: string }
  | { kind: 'notify'; text: string; to?: { channel: string; to: string }[] }
  | {
      kind: 'waitFor';
      event:
        | { source: 'email'; from: string; thread?: string }
        | { source: 'telegram'; from?: string; contains?: string }
        | { source: 'matrix'; from?: string; room?: string; contains?: string }
        | { source: 'approval'; question: string };
      within: string | number;
      onEvent?: 'continue' | 'end';
      onTimeout?: 'continue' | 'end';
    }
  | { kind: 'plan' };

/** `telegram:123` → `{ channel: 'telegram', to: '123' }` (the channel name holds no colon). */
const recipient = (r: string): { channel: string; to: string } => ({
  channel: r.slice(0, r.indexOf(':')),
  to: r.slice(r.indexOf(':') + 1),
});

/** The capabilities notices to other people need: `channel.send:<channel>` for each channel they go to. */
export function noticeCapabilities(steps: readonly MissionStepSpec[]): string[] {
  const channels = steps.flatMap((s) => (typeof s === 'object' && 'notify' in s && s.to ? s.to.map((r) => recipient(r).channel) : []));
  return [...new Set(channels)].map((c) => `channel.send:${c}`);
}

/** The canonical definition step of a checked spec step (a local time becomes an instant with its offset). */
export function defineStep(s: MissionStepSpec): DefinedStep {
  if (typeof s === 'string') return { text: s };
  if ('wait' in s) return { kind: 'wait', for: s.wait };
  if ('notify' in s) return { kind: 'notify', text: s.notify, ...(s.to ? { to: s.to.map(recipient) } : {}) };
  if ('waitFor' in s) {
    const w = s.waitFor;
    const event: Extract<DefinedStep, { kind: 'waitFor' }>['event'] =
      'approval' in w
        ? { source: 'approval', question: w.approval }
        : 'email' in w
          ? {
              source: 'email' as const,
              from: w.email.from.toLowerCase(),
              ...(w.email.thread ? { thread: w.email.thread.replace(/^<|>$/g, '') } : {}),
            }
          : 'telegram' in w
            ? { source: 'telegram' as const, ...w.telegram }
            : { source: 'matrix' as const, ...w.matrix };
    return {
      kind: 'waitFor',
      event,
      within: s.within,
      ...(s.onEvent ? { onEvent: s.onEvent as Branch } : {}),
      ...(s.onTimeout ? { onTimeout: s.onTimeout as Branch } : {}),
    };
  }
  const until = INSTANT.test(s.waitUntil) ? s.waitUntil : localToInstant(s.waitUntil, s.timeZone!);
  return { kind: 'wait', until, ...(s.timeZone ? { timeZone: s.timeZone } : {}) };
}

/** A 5-field cron expression (minute hour day-of-month month day-of-week); Temporal checks the rest. */
const CRON = /^[0-9*/,A-Za-z?-]+(\s+[0-9*/,A-Za-z?-]+){4}$/;

/** When a recurring mission runs: every interval or on a cron, in a time zone, with an overlap policy. */
export const missionScheduleSpecSchema = z.lazy(() =>
  z
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
    }),
);

/** A recurring mission's schedule as written. */
export type MissionScheduleSpec = z.infer<typeof missionScheduleSpecSchema>;
