/**
 * When a reminder fires, as a person types it (`aivyx mission create --in 2h`, `--at "tomorrow 09:00"`),
 * turned into a mission's first step (core/mission-spec.ts): a `wait` for a duration, or a `waitUntil`
 * a local time in a time zone. Pure (Intl only, `now` given), used at the edge like local-time.ts.
 */
import { durationMs } from './duration.js';
import { checkTimeZone, localToInstant, wallClockAt } from './local-time.js';
import { INSTANT } from './schemas.js';

/** A wait step for `--in`: `90s`, `2h`, `3d`, or parts added up (`1h30m`). Throws a plain Error saying what is wrong. */
export function waitStepIn(text: string): { wait: string | number } {
  const parts = text.trim().match(/\d+(?:\.\d+)?\s*(?:ms|s|m|h|d)/g);
  if (!parts || parts.join('').replace(/\s/g, '') !== text.replace(/\s/g, ''))
    throw new Error(`--in "${text}" is not a duration such as 90s, 2h, 3d or 1h30m`);
  const ms = parts.reduce((sum, p) => sum + durationMs(p), 0);
  if (ms <= 0) throw new Error(`--in "${text}" is no time at all`);
  return parts.length === 1 ? { wait: parts[0]!.replace(/\s/g, '') } : { wait: ms };
}

const DAY = /^(today|tomorrow|\d{4}-\d{2}-\d{2})$/i;
const CLOCK = /^(\d{1,2}):(\d{2})$/;

/** The calendar date (YYYY-MM-DD) in `tz` at instant `now`, moved by `days`. */
function dateIn(tz: string, now: number, days: number): string {
  const w = wallClockAt(now, tz);
  return new Date(Date.UTC(w.year, w.month - 1, w.day + days)).toISOString().slice(0, 10);
}

/** The wall-clock time (YYYY-MM-DDTHH:MM) in `tz` at instant `ms`. */
function wallClock(ms: number, tz: string): string {
  const w = wallClockAt(ms, tz);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${w.year}-${two(w.month)}-${two(w.day)}T${two(w.hour)}:${two(w.minute)}`;
}

/** `HH:MM` (or `H:MM`) as `HH:MM`; throws unless it is a time of day. */
function clock(text: string, at: string): string {
  const m = CLOCK.exec(text);
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) throw new Error(`--at "${at}": "${text}" is not a time of day such as 09:00`);
  return `${m[1]!.padStart(2, '0')}:${m[2]}`;
}

/**
 * A waitUntil step for `--at`: `tomorrow 09:00`, `today 17:30`, `2027-03-01 09:00`, `2027-03-01T09:00`, or a
 * bare `09:00` (today, or tomorrow once today's has passed) — a local time in `tz` — or an instant with its
 * offset. Refuses a time already past at `now` (a reminder that fires at once is a mistake, not a wish).
 */
export function waitStepAt(text: string, tz: string, now: number): { waitUntil: string; timeZone?: string } {
  checkTimeZone(tz);
  const at = text.trim();
  if (INSTANT.test(at)) {
    if (Date.parse(at) <= now) throw new Error(`--at "${text}" is in the past`);
    return { waitUntil: at };
  }
  const words = at.replace(/^(\d{4}-\d{2}-\d{2})T/, '$1 ').split(/\s+/);
  let local: string;
  if (words.length === 1) {
    const time = clock(words[0]!, text);
    local = `${dateIn(tz, now, 0)}T${time}`;
    if (Date.parse(localToInstant(local, tz)) <= now) local = `${dateIn(tz, now, 1)}T${time}`;
  } else if (words.length === 2 && DAY.test(words[0]!)) {
    const day = words[0]!.toLowerCase();
    const date = day === 'today' ? dateIn(tz, now, 0) : day === 'tomorrow' ? dateIn(tz, now, 1) : day;
    local = `${date}T${clock(words[1]!, text)}`;
  } else {
    throw new Error(`--at "${text}" is not a time such as "tomorrow 09:00", "today 17:30", "2027-03-01 09:00" or "09:00"`);
  }
  const instant = localToInstant(local, tz);
  // A time the clocks skip (02:30 on the night they go forward) would fire at another wall-clock time.
  if (wallClock(Date.parse(instant), tz) !== local)
    throw new Error(`--at "${text}": ${local.replace('T', ' ')} does not exist in ${tz} (the clocks skip it); choose another time`);
  if (Date.parse(instant) <= now) throw new Error(`--at "${text}" is in the past (${instant})`);
  return { waitUntil: local, timeZone: tz };
}
