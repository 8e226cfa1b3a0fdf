/**
 * Input field builders shared by the tool definitions. Each is a zod schema (so the model's JSON
 * schema derives from it) whose refusals are worded here, once: `"field" must be …`, naming the field,
 * never zod's own text. A hint rides after {@link HINT_SEPARATOR}; the parser splits it off.
 */
import { z } from 'zod';
import { AivyxError } from '../errors.js';
import { normalizePosixPath } from '../path.js';

/** Separates a refusal from its hint inside a zod issue message (a control character no message holds). */
export const HINT_SEPARATOR = '\u001f';

/** A refusal message with an optional hint, as the field builders hand it to zod (the separator marks it as ours). */
export function says(message: string, hint?: string): string {
  return `${message}${HINT_SEPARATOR}${hint ?? ''}`;
}

/** `"field" must be true or false`. */
export function booleanField(field: string, description: string) {
  return z.boolean({ error: says(`"${field}" must be true or false`) }).describe(description);
}

/** An integer in 1..max. */
export function positiveIntField(field: string, max: number, description: string) {
  const message = says(`"${field}" must be an integer between 1 and ${max}`);
  return z.number({ error: message }).int({ error: message }).min(1, { error: message }).max(max, { error: message }).describe(description);
}

/** A string matching `pattern` (names, keys, ids): one message for every way it can be wrong. */
export function patternField(field: string, pattern: RegExp, message: string, description: string, hint?: string) {
  const m = says(`"${field}" ${message}`, hint);
  return z.string({ error: m }).regex(pattern, { error: m }).describe(description);
}

/** A string that must not be blank, with a length limit; `nul` refuses NUL bytes too. */
export function textField(field: string, max: number, description: string, opts: { longHint?: string; nul?: boolean } = {}) {
  return z
    .string({ error: says(`"${field}" must be a non-empty string`) })
    .max(max, { error: says(`"${field}" is longer than ${max} characters`, opts.longHint) })
    .refine((v) => v.trim() !== '', { error: says(`"${field}" must be a non-empty string`) })
    .refine((v) => !opts.nul || !v.includes('\0'), { error: says(`"${field}" contains a NUL byte`) })
    .describe(description);
}

/**
 * A non-empty absolute path, lexically normalized (no `..` above the root). `concrete` also refuses
 * glob characters (a path that becomes a scope must name one place).
 */
export function absolutePathField(field: string, description: string, opts: { hint?: string; concrete?: boolean } = {}) {
  const empty = says(`"${field}" must be a non-empty string`);
  return z
    .string({ error: empty })
    .min(1, { error: empty })
    .describe(description)
    .transform((value, ctx) => {
      const refuse = (message: string, hint?: string): never => {
        ctx.addIssue({ code: 'custom', message: says(message, hint), input: value });
        return z.NEVER;
      };
      if (!value.startsWith('/'))
        return refuse(`"${field}" must be an absolute path, got "${value}"`, opts.hint ?? 'give the full path, starting with /');
      if (opts.concrete && /[*?[\]{}]/.test(value)) return refuse(`"${field}" must be a concrete path, not a glob`);
      try {
        return normalizePosixPath(value);
      } catch (cause) {
        if (cause instanceof AivyxError) return refuse(cause.message, cause.hint);
        throw cause;
      }
    });
}
