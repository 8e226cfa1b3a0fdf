/**
 * `value.read`: the quarantined read. The reader's raw answer is checked against the declared type
 * here, so whatever the data made the reader say, only a value of that type comes out: a choice among
 * the caller's options, a number within the caller's bounds. Text, addresses and URLs keep the label
 * of what was read (runTool then holds them as a new value); typed answers are shown to the model.
 */
import { z } from 'zod';
import { AivyxError } from '../../core/errors.js';
import { flatLabel } from '../../core/taint.js';
import { SHOWN_READ_TYPES, valueReadTool, type ValueReadInput } from '../../core/tools/value-read.js';
import type { QuarantinedReader } from '../llm/quarantined-reader.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Longest text answer (characters). */
const ANSWER_MAX_TEXT = 4000;

/** The schema an answer must fit, and how it is named in a refusal. */
function answerSchema(i: ValueReadInput): { schema: z.ZodType; says: string } {
  switch (i.as) {
    case 'number':
      return { schema: z.number().min(i.min!).max(i.max!), says: `a number between ${i.min} and ${i.max}` };
    case 'date':
      return { schema: z.iso.date(), says: 'a date (YYYY-MM-DD)' };
    case 'boolean':
      return { schema: z.boolean(), says: 'true or false' };
    case 'choice':
      return { schema: z.enum(i.choices as [string, ...string[]]), says: `one of ${i.choices!.join(', ')}` };
    case 'addresses':
      return { schema: z.array(z.email()).max(50), says: 'a list of e-mail addresses' };
    case 'url':
      return { schema: z.url({ protocol: /^https?$/ }), says: 'an http(s) URL' };
    default:
      return { schema: z.string().max(ANSWER_MAX_TEXT), says: `text of at most ${ANSWER_MAX_TEXT} characters` };
  }
}

/** Creates the `value.read` implementation over a quarantined reader. */
export function createValueReadTool(deps: { reader: QuarantinedReader }): ToolImplementation {
  return implementTool(valueReadTool, {
    async run(i, ctx) {
      const { signal, spend } = ctx;
      const raw = await deps.reader.read({ ...i, data: i.from }, { signal, heartbeat: () => ctx.heartbeat(), ...(spend ? { spend } : {}) });
      const { schema, says } = answerSchema(i);
      const fits = schema.safeParse(raw);
      if (!fits.success)
        throw new AivyxError('Tool', `value.read: the quarantined reader's answer is not ${says}`, {
          hint: 'nothing was returned; ask again, or in another type',
          detail: { tool: 'value.read', as: i.as },
        });
      // Text can carry instructions: it keeps what it was read from (the values' and the turn's sources).
      // A typed answer is shown, and says where it came from: the workflow keeps it out of authority fields.
      const from = ctx.taint?.length ? flatLabel(ctx.taint) : undefined;
      if (SHOWN_READ_TYPES.has(i.as) || !from)
        return { kind: 'completed', output: { answer: fits.data, ...(from ? { from } : {}) }, verified: 'NotApplicable' };
      return { kind: 'completed', output: { answer: fits.data }, verified: 'NotApplicable', untrusted: from };
    },
  });
}
