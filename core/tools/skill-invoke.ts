/**
 * `skills.invoke`: renders one approved skill's whole procedure. The steps are guidance for the
 * model, never authority: the turn keeps exactly the tools and capabilities it had.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { skillNameField } from './skill-fields.js';

/** Validated input of `skills.invoke`. */
export interface SkillInvokeInput {
  name: string;
}

export const skillInvokeTool = defineTool({
  id: 'skills.invoke',
  summary: "Load an approved skill's steps by name",
  description:
    "Load one approved skill's procedure by name (from skills.list) and follow its steps with the tools you have; it grants no tool or permission. Returns {name, version, summary, whenToUse, steps, tools, unavailableTools}.",
  input: () => z.strictObject({ name: skillNameField('The skill to load.') }),
  scope: { base: 'skills.invoke' },
  idempotency: 'natural',
  provenance: { output: 'depends', effect: false },
});

export const parseSkillInvokeInput = skillInvokeTool.parse;
