/**
 * Reading the environment through the table: every variable parsed at once (every bad one named
 * with its value, before anything starts), one variable for a channel's own config, the rows
 * `aivyx config` prints, and the docs/CONFIG.md table.
 */
import { AivyxError } from '../../core/errors.js';
import type { EnvVar } from './env-var.js';
import { ENV_TABLE, type EnvName, type EnvValues } from './env-table.js';

/** Where a value came from. */
export type EnvSource = 'env' | 'default';

/** What `aivyx config` shows for one variable. */
export interface EnvRow {
  name: EnvName;
  group: string;
  /** The value as set (secrets: `set`/`unset`; a URL's password masked), or the default. */
  value: string;
  source: EnvSource;
  meaning: string;
  /** Why the value is refused, when it is. */
  error?: string;
}

const NAMES = Object.keys(ENV_TABLE) as EnvName[];
const HINT = 'fix or unset it; `aivyx config` lists every variable with its value, default and meaning';

function entry(name: EnvName): EnvVar<unknown> {
  return ENV_TABLE[name] as EnvVar<unknown>;
}

/** A value as it may be shown: secrets never, a URL's password masked. */
function shown(name: EnvName, raw: string): string {
  if (entry(name).sensitive) return 'set';
  if (URL.canParse(raw)) {
    const url = new URL(raw);
    if (url.password) {
      url.password = '***';
      return url.toString();
    }
  }
  return raw;
}

/** The refusal of one value, or undefined when it parses. */
function problem(name: EnvName, raw: string | undefined): { message: string; value?: unknown } {
  const result = entry(name).schema.safeParse(raw);
  if (result.success) return { message: '', value: result.data };
  // A parser's own message may already start with the variable's name.
  const why = result.error.issues.map((i) => i.message.replace(new RegExp(`^${name}:?\\s*`), '')).join('; ');
  const given = raw === undefined ? '(unset)' : entry(name).sensitive ? '(value hidden)' : JSON.stringify(shown(name, raw));
  return { message: `${name}=${given}: ${why}` };
}

/** Parses every variable of the table; throws one `Config` error naming each bad variable and its value. */
export function parseEnv(env: Record<string, string | undefined>): { values: EnvValues; sources: Record<EnvName, EnvSource> } {
  const values: Record<string, unknown> = {};
  const sources = {} as Record<EnvName, EnvSource>;
  const bad: string[] = [];
  for (const name of NAMES) {
    const raw = env[name];
    const p = problem(name, raw);
    if (p.message) bad.push(p.message);
    else values[name] = p.value;
    sources[name] = raw === undefined ? 'default' : 'env';
  }
  if (bad.length > 0) {
    throw new AivyxError('Config', bad.length === 1 ? bad[0]! : `invalid configuration:\n  ${bad.join('\n  ')}`, {
      hint: HINT,
      detail: { variables: bad.map((b) => b.slice(0, b.indexOf('='))) },
    });
  }
  return { values: values as EnvValues, sources };
}

/** One variable through the table (for code that reads a single setting); throws like `parseEnv`. */
export function envValue<K extends EnvName>(env: Record<string, string | undefined>, name: K): EnvValues[K] {
  const p = problem(name, env[name]);
  if (p.message) throw new AivyxError('Config', p.message, { hint: HINT, detail: { variables: [name] } });
  return p.value as EnvValues[K];
}

/** Every variable as `aivyx config` shows it; bad values carry their error instead of throwing. */
export function describeEnv(env: Record<string, string | undefined>): EnvRow[] {
  return NAMES.map((name) => {
    const v = entry(name);
    const raw = env[name];
    const p = problem(name, raw);
    const value = raw !== undefined ? shown(name, raw) : v.sensitive ? 'unset' : v.default.replace(/`/g, '');
    return {
      name,
      group: v.group,
      value,
      source: raw === undefined ? 'default' : 'env',
      meaning: v.meaning,
      ...(p.message ? { error: p.message } : {}),
    };
  });
}

/** docs/CONFIG.md's configuration table, generated from the table (`aivyx config --markdown`). */
export function envMarkdownTable(): string {
  const rows = NAMES.map((name) => {
    const v = entry(name);
    return `| \`${name}\` | ${v.default} | ${v.meaning} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
