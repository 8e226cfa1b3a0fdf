/**
 * Short ids, like git's: a person may type the start of an id (`aivyx mission show 8926`) wherever
 * one is asked for. Pure: the caller lists the ids that exist, this picks the one meant.
 */
import { AivyxError } from './errors.js';

/** How many candidates an ambiguity error lists before "…". */
const SHOWN = 8;

/**
 * The id among `ids` that `input` names: itself, or the only id that starts with it (also after one of
 * `prefixes`, so `8926` names `mission-8926…` and `confirm-89` names `mission-confirm-89…`). Undefined
 * when none does (the caller passes the input on, and the server says what is missing); throws `Config`
 * naming the candidates when several do.
 */
export function resolvePrefix(input: string, ids: readonly string[], what: string, prefixes: readonly string[] = []): string | undefined {
  if (input === '') return undefined;
  const unique = [...new Set(ids)];
  if (unique.includes(input)) return input;
  const starts = [input, ...prefixes.map((p) => `${p}${input}`)];
  const matches = unique.filter((id) => starts.some((s) => id.startsWith(s)));
  if (matches.length <= 1) return matches[0];
  const listed = matches.slice(0, SHOWN).map((m) => `  ${m}`);
  throw new AivyxError(
    'Config',
    `"${input}" matches ${matches.length} ${what} ids:\n${listed.join('\n')}${matches.length > SHOWN ? '\n  …' : ''}`,
    {
      hint: `give more of the ${what} id`,
      detail: { ambiguous: matches.length },
    },
  );
}

/** The shortest start of `id` (after `prefix`, at least `min` characters of what follows) no other of `ids` shares. */
export function shortestUniquePrefix(id: string, ids: readonly string[], prefix = '', min = 8): string {
  const body = id.startsWith(prefix) ? id.slice(prefix.length) : id;
  const others = ids.filter((o) => o !== id).map((o) => (o.startsWith(prefix) ? o.slice(prefix.length) : o));
  for (let n = Math.min(min, body.length); n < body.length; n++) {
    const start = body.slice(0, n);
    if (!others.some((o) => o.startsWith(start))) return start;
  }
  return body;
}
