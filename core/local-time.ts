/**
 * A wall-clock time in an IANA time zone ("2027-03-01T09:00" in "Europe/Berlin") as an instant
 * with its UTC offset. Pure (Intl only); used at the edge — the REST gateway, the mission.create
 * tool — never inside a workflow, so a worker's time-zone data can never change a replay.
 */

/** `YYYY-MM-DDTHH:MM[:SS]` without an offset. */
export const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** Throws a plain Error unless `tz` is a time zone this runtime knows. */
export function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new Error(`unknown time zone "${tz}" (use an IANA name such as Europe/Berlin or UTC)`);
  }
}

/** The wall clock in `tz` at instant `ms`: calendar fields as numbers (month 1-12, hour 0-23). */
export function wallClockAt(
  ms: number,
  tz: string,
): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const n = (t: string): number => Number(parts.find((p) => p.type === t)?.value);
  return { year: n('year'), month: n('month'), day: n('day'), hour: n('hour'), minute: n('minute'), second: n('second') };
}

/** The zone's offset from UTC (ms) at instant `ms`. */
function offsetAt(ms: number, tz: string): number {
  const w = wallClockAt(ms, tz);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

const pad = (n: number): string => String(Math.abs(n)).padStart(2, '0');

/** `local` (LOCAL_TIME) in `tz` as ISO 8601 with the offset that applies then; throws a plain Error when malformed. */
export function localToInstant(local: string, tz: string): string {
  checkTimeZone(tz);
  const m = LOCAL_TIME.exec(local);
  if (!m) throw new Error(`"${local}" is not a local time such as 2027-03-01T09:00`);
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(wall);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
    throw new Error(`"${local}" is not a real date and time`);
  // Twice: the offset at the first guess may differ across a DST change.
  let offset = offsetAt(wall - offsetAt(wall, tz), tz);
  offset = offsetAt(wall - offset, tz);
  const sign = offset < 0 ? '-' : '+';
  const mins = Math.abs(offset) / 60_000;
  return `${local.length === 16 ? `${local}:00` : local}${sign}${pad(Math.floor(mins / 60))}:${pad(mins % 60)}`;
}
