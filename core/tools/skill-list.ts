/** `skills.list`: the approved skills by name and one-line summary (cheap to include in any turn). */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { says } from './fields.js';

/** Validated input of `skills.list`. */
export interface SkillListInput {
  /** Only skills whose name or summary holds every one of these words (case-insensitive). */
  query?: string;
}

export const skillListTool = defineTool({
  id: 'skills.list',
  summary: "List the owner's approved skills",
  description:
    'List the skills the owner approved (procedures learned from earlier chores): name and one-line summary, optionally only those matching query. Before a multi-step chore, look here; load one with skills.invoke. Returns {skills: [{name, summary}]}.',
  input: () =>
    z.strictObject({
      query: z
        .string({ error: says('"query" must be a string of at most 200 characters') })
        .max(200, { error: says('"query" must be a string of at most 200 characters') })
        .describe('Words the name or summary must hold (optional).')
        .optional(),
    }),
  canonical: ({ query }): SkillListInput => (query !== undefined && query.trim() !== '' ? { query: query.trim() } : {}),
  scope: { base: 'skills.list' },
  idempotency: 'natural',
  // A summary proposed after untrusted content keeps that label, approved or not.
  provenance: { output: 'depends', effect: false },
});

export const parseSkillListInput = skillListTool.parse;
