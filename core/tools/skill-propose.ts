/**
 * `skills.propose`: the model proposes a procedure it has just carried out as a skill. Confirm-first
 * by default, and its implementation stores nothing without a person's approval of this exact call:
 * the approver sees the whole procedure (and, for a proposal made after untrusted content, where
 * that content came from), and the stored skill is bound to the hash of what was approved.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { canonicalSkill, skillContentFields, type SkillContent } from './skill-fields.js';

/** Validated input of `skills.propose`. */
export type SkillProposeInput = SkillContent;

export const skillProposeTool = defineTool({
  id: 'skills.propose',
  summary: 'Propose a finished multi-step chore as a reusable skill',
  description:
    'After finishing a multi-step chore that will come up again, propose it as a skill: name, one-line summary, when to use it, the steps, the tools it uses. The owner sees it whole and approves it before it is stored; proposing a name that exists proposes its next version. Returns {name, version}.',
  input: () => z.strictObject(skillContentFields()),
  canonical: (p): SkillProposeInput => canonicalSkill(p),
  scope: { base: 'skills.propose' },
  idempotency: 'keyed',
  confirmFirst: true,
  // Storing a skill is an effect; what it stores is labelled with the proposing turn's untrusted sources.
  provenance: { output: 'trusted', effect: true },
});

export const parseSkillProposeInput = skillProposeTool.parse;
