/** zod's verdict on a request body as one sentence a person can act on, naming each bad field. */
import type { z } from 'zod';
import { AivyxError } from '../core/errors.js';

/** `field "reminderAfter": must be a duration …; unknown field "x"` */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `unknown field "${[...issue.path, k].join('.')}"`).join('; ');
      const field = issue.path.join('.');
      return field ? `field "${field}": ${issue.message}` : issue.message;
    })
    .join('; ');
}

/** Parses `input` with `schema`, or throws `Config` naming every bad field (a 400 at the REST channel). */
export function parseBody<T>(schema: z.ZodType<T>, input: unknown, what: string, hint?: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new AivyxError('Config', `invalid ${what}: ${describeZodError(result.error)}`, hint ? { hint } : {});
}
