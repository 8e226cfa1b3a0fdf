/**
 * `value.read` as the core knows it (pure, workflow-safe): the quarantined reader (docs/SECURITY.md,
 * "The value model"). A model with no tools reads a value — usually a held untrusted result — and
 * answers one question in a declared type. Typed answers that cannot carry instructions (a boolean, a
 * choice among the caller's options, a number within the caller's bounds, a date) are shown to the
 * planning model; text, addresses and URLs keep their source's label and come back as a new value.
 */
import { z } from 'zod';
import { defineTool, fieldError } from './define-tool.js';
import { says, textField } from './fields.js';

/** The types a quarantined read may answer in. */
export const READ_TYPES = ['text', 'number', 'date', 'boolean', 'choice', 'addresses', 'url'] as const;
export type ReadType = (typeof READ_TYPES)[number];

/** Answers the planning model may see as they are: they cannot carry instructions. */
export const SHOWN_READ_TYPES: ReadonlySet<ReadType> = new Set(['number', 'date', 'boolean', 'choice']);

/** Longest value a quarantined read takes (characters), and longest question. */
export const READ_MAX_DATA = 200_000;
export const READ_MAX_QUESTION = 500;
/** At most this many choices, each at most 64 characters. */
export const READ_MAX_CHOICES = 20;

/** Validated input of `value.read`. */
export interface ValueReadInput {
  from: string;
  as: ReadType;
  question: string;
  choices?: string[];
  min?: number;
  max?: number;
}

/** `value.read`: ask a tool-less model one question about a value, answered in a declared type. */
export const valueReadTool = defineTool({
  id: 'value.read',
  summary: 'Ask a quarantined reader one question about a held value',
  description:
    'Ask a quarantined reader (a model with no tools) one question about a value, e.g. {"from": "{{value:v0123456789ab}}", "as": "number", "question": "the invoice total in euros", "min": 0, "max": 100000}. as: text, number (needs min and max), date, boolean, choice (needs choices), addresses (e-mail addresses), url. A number, date, boolean or choice comes back as {answer}; text, addresses and urls come back as a new value.',
  input: () =>
    z.strictObject({
      // A reference becomes its value's text when the call runs (a fetched page's body, a file's content).
      from: z
        .string({ error: says('"from" must be a value\'s reference {{value:v…}}') })
        .max(READ_MAX_DATA, { error: says(`"from" is longer than ${READ_MAX_DATA} characters`, 'read a smaller part') })
        .describe('What to read: a value reference {{value:v…}} (or text).'),
      as: z.enum(READ_TYPES, { error: says(`"as" must be one of ${READ_TYPES.join(', ')}`) }),
      question: textField('question', READ_MAX_QUESTION, 'What to find, e.g. "the sender\'s address" or "is it a refund?".'),
      choices: z
        .array(z.string().min(1).max(64), { error: says('"choices" must be a list of short strings') })
        .min(2)
        .max(READ_MAX_CHOICES)
        .optional()
        .describe('For as=choice: the answers allowed.'),
      min: z.number({ error: says('"min" must be a number') }).optional(),
      max: z.number({ error: says('"max" must be a number') }).optional(),
    }),
  canonical: (i): ValueReadInput => {
    if (i.as === 'choice' && !i.choices) throw fieldError('"choices" is needed for as=choice', 'list the answers allowed');
    if (i.as !== 'choice' && i.choices) throw fieldError('"choices" only goes with as=choice');
    if (i.as === 'number' && (i.min === undefined || i.max === undefined || i.min > i.max))
      throw fieldError('as=number needs "min" and "max" (min ≤ max)', 'a bounded number is one an attacker cannot stretch');
    if (i.as !== 'number' && (i.min !== undefined || i.max !== undefined)) throw fieldError('"min" and "max" only go with as=number');
    return i;
  },
  scope: { base: 'llm.call', qualifier: () => 'quarantined' },
  idempotency: 'natural',
  provenance: { output: 'depends', effect: false },
});

export const parseValueReadInput = valueReadTool.parse;
