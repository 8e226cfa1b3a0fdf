/**
 * "Did you mean": an unknown command answered with one line naming the closest known ones
 * (node:util's parseArgs has no such facility), instead of the whole usage.
 */

/** Levenshtein distance with adjacent transpositions (`sesions`→`sessions` is 1, `chta`→`chat` is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/** The known words closest to `word` (at most a third of its length away, at least 1; ties all named). */
export function closest(word: string, known: readonly string[]): string[] {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(w.length / 3));
  const scored = known.map((k) => ({ k, d: k.startsWith(w) && w.length >= 3 ? 0.5 : editDistance(w, k) })).filter((s) => s.d <= limit);
  const best = Math.min(...scored.map((s) => s.d));
  return scored.filter((s) => s.d === best).map((s) => s.k);
}

/** The one line for an unknown command: the closest commands, or where the list is. */
export function unknownCommand(word: string, known: readonly string[], what = 'command', help = 'aivyx help'): string {
  const near = closest(word, known);
  return near.length > 0
    ? `unknown ${what} "${word}" — did you mean ${near.map((n) => `"${n}"`).join(' or ')}?`
    : `unknown ${what} "${word}" (${help} lists them)`;
}
