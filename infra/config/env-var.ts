/**
 * How one environment variable is described and parsed: a zod schema from the raw text (undefined
 * when unset) to a typed value with the default applied, plus what `aivyx config` and the README
 * say about it. The builders here state each value shape once; `env-table.ts` lists the variables.
 */
import { z } from 'zod';

/**
 * Where a variable belongs (`aivyx config` groups by it). `channels`: the variables of a chat channel
 * added through docs/CONTRIBUTING.md ("Adding a channel"); Telegram and e-mail have their own groups.
 */
export type EnvGroup = 'storage' | 'temporal' | 'model' | 'agent' | 'mcp' | 'telegram' | 'email' | 'channels' | 'telemetry';

/** One environment variable: its parser, its default (as shown to a person) and one line of meaning. */
export interface EnvVar<T> {
  group: EnvGroup;
  /** The default as a person reads it, e.g. `7233` or `unset → PGlite`. */
  default: string;
  /** One line (markdown) on what it does. */
  meaning: string;
  /** Its value is never printed (`aivyx config` says set/unset); errors never echo it. */
  sensitive?: boolean;
  /** Raw text (undefined when unset) → the typed value, default applied. */
  schema: z.ZodType<T, string | undefined>;
}

/** Declares a variable (an identity that keeps the value type for `EnvValues`). */
export function envVar<T>(v: EnvVar<T>): EnvVar<T> {
  return v;
}

type Ctx = z.core.$RefinementCtx<string | undefined>;

/** A schema over the set value; unset (or empty, unless `emptyIsSet`) gives `fallback`. */
function shaped<T, F>(
  fallback: F,
  parse: (raw: string, fail: (message: string) => never) => T,
  opts: { emptyIsSet?: boolean } = {},
): z.ZodType<T | F, string | undefined> {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || (raw === '' && !opts.emptyIsSet)) return fallback;
      try {
        return parse(raw, (message) => {
          throw new EnvValueError(message);
        });
      } catch (e) {
        addIssue(ctx, e);
        return z.NEVER;
      }
    });
}

class EnvValueError extends Error {}

function addIssue(ctx: Ctx, e: unknown): void {
  ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e) });
}

/** Free text; unset → `fallback`. */
export function text(): z.ZodType<string | undefined, string | undefined>;
export function text(fallback: string): z.ZodType<string, string | undefined>;
export function text(fallback?: string): z.ZodType<string | undefined, string | undefined> {
  return shaped(fallback, (raw) => raw);
}

/** A TCP port; `min` 0 lets the OS choose a free one; an undefined `fallback` leaves it unset (e.g. a channel that is off). */
export function port(fallback: number, min?: 0 | 1): z.ZodType<number, string | undefined>;
export function port(fallback: undefined, min?: 0 | 1): z.ZodType<number | undefined, string | undefined>;
export function port(fallback: number | undefined, min: 0 | 1 = 1): z.ZodType<number | undefined, string | undefined> {
  return shaped(fallback, (raw, fail) => {
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || n < min || n > 65535) fail(`not a port (${min}–65535${min === 0 ? ', 0 for any free port' : ''})`);
    return n;
  });
}

/** An integer ≥ `min`. */
export function integer(fallback: number, min: number, what?: string): z.ZodType<number, string | undefined>;
export function integer(fallback: undefined, min: number, what?: string): z.ZodType<number | undefined, string | undefined>;
export function integer(fallback: number | undefined, min: number, what = 'an integer'): z.ZodType<number | undefined, string | undefined> {
  return shaped(fallback, (raw, fail) => {
    const n = Number(raw.trim());
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min) fail(`must be ${what} ≥ ${min}`);
    return n;
  });
}

/** `on` or `off` (also true/false, 1/0, yes/no); unset → `fallback`. */
export function onOff(fallback: boolean): z.ZodType<boolean, string | undefined>;
export function onOff(fallback: undefined): z.ZodType<boolean | undefined, string | undefined>;
export function onOff(fallback: boolean | undefined): z.ZodType<boolean | undefined, string | undefined> {
  return shaped(fallback, (raw, fail) => {
    const v = raw.trim().toLowerCase();
    if (['on', 'true', '1', 'yes'].includes(v)) return true;
    if (['off', 'false', '0', 'no'].includes(v)) return false;
    return fail('must be on or off (true/false)');
  });
}

/** One of `values`. */
export function oneOf<const V extends string>(values: readonly V[], fallback: V): z.ZodType<V, string | undefined>;
export function oneOf<const V extends string>(values: readonly V[], fallback: undefined): z.ZodType<V | undefined, string | undefined>;
export function oneOf<const V extends string>(values: readonly V[], fallback: V | undefined): z.ZodType<V | undefined, string | undefined> {
  return shaped(fallback, (raw, fail) => {
    const v = raw.trim();
    if (!(values as readonly string[]).includes(v)) fail(`must be one of ${values.join(', ')}`);
    return v as V;
  });
}

/**
 * A comma-separated list, each item checked by `item` (which throws to refuse it). Set but empty
 * means an explicit empty list; unset gives `fallback`.
 */
export function list<T = string>(fallback: readonly T[], item?: (s: string) => T): z.ZodType<T[], string | undefined>;
export function list<T = string>(fallback: undefined, item?: (s: string) => T): z.ZodType<T[] | undefined, string | undefined>;
export function list<T = string>(
  fallback: readonly T[] | undefined,
  item: (s: string) => T = (s) => s as T,
): z.ZodType<T[] | undefined, string | undefined> {
  return shaped(
    fallback === undefined ? undefined : [...fallback],
    (raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map(item),
    { emptyIsSet: true },
  );
}

/** An http(s) URL. */
export function httpUrl(): z.ZodType<string | undefined, string | undefined> {
  return shaped(undefined, (raw, fail) => {
    if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) fail('must be an http:// or https:// URL');
    return raw;
  });
}

/** A value parsed by an existing parser that throws a message-bearing error on bad input. */
export function parsedBy<T>(fallback: T, parse: (raw: string) => T): z.ZodType<T, string | undefined> {
  return shaped(fallback, (raw) => parse(raw));
}
