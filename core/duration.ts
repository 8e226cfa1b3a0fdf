/** Durations in mission definitions: `'90s'`, `'24h'`, `'3d'`, or plain milliseconds. Pure. */

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration as milliseconds; throws on a malformed one. */
export function durationMs(d: string | number): number {
  if (typeof d === 'number') {
    if (!Number.isFinite(d) || d < 0) throw new Error(`invalid duration ${d}`);
    return d;
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(d);
  if (!m || m[1] === undefined || m[2] === undefined) throw new Error(`invalid duration "${d}" (use e.g. 90s, 24h, 3d)`);
  return Number(m[1]) * (UNITS[m[2]] ?? 1);
}
