/**
 * What the skills tools share (issue 35): a skill's name, its parts and their limits. A skill is a
 * procedure the owner approved, shown to the model as guidance; it never grants anything.
 */
import { z } from 'zod';
import { patternField, says, textField } from './fields.js';

/** A skill name: a lower-case slug, so it is one unambiguous word in a listing. */
export const SKILL_NAME = /^[a-z][a-z0-9-]{1,47}$/;
/** A tool id as the catalog spells them (`fs.read`, `mission.create`). */
const TOOL_ID = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
/** Longest one-line summary: what every turn pays for in its listing. */
export const SKILL_SUMMARY_MAX = 120;
/** Longest "when to use it" (never cut in the approver's view either). */
export const SKILL_WHEN_MAX = 300;
/** Most steps, and the longest step (an approver's view cuts a value at 300 characters: none is cut). */
export const SKILL_STEPS_MAX = 20;
export const SKILL_STEP_MAX = 300;
/** Most tools a skill names. */
export const SKILL_TOOLS_MAX = 12;

/** A skill's content, exactly as proposed, approved and stored (its hash binds the approval). */
export interface SkillContent {
  name: string;
  summary: string;
  whenToUse: string;
  steps: string[];
  tools: string[];
}

/** The `name` field. */
export const skillNameField = (description: string) =>
  patternField(
    'name',
    SKILL_NAME,
    'must be 2-48 lower-case letters, digits or "-", starting with a letter',
    description,
    'e.g. "file-receipts"',
  );

/** The fields of a proposal, in the order the model is shown them. */
export const skillContentFields = () => ({
  name: skillNameField('A short slug naming the skill, e.g. "file-receipts".'),
  summary: textField('summary', SKILL_SUMMARY_MAX, 'One line: what the skill does (shown in every listing).').refine(
    (v) => !/[\r\n]/.test(v),
    {
      error: says('"summary" must be one line'),
    },
  ),
  whenToUse: textField('whenToUse', SKILL_WHEN_MAX, 'When a later conversation should follow it.'),
  steps: z
    .array(textField('steps', SKILL_STEP_MAX, 'One step.'), { error: says('"steps" must be a list of strings') })
    .min(1, { error: says('"steps" must have at least one step') })
    .max(SKILL_STEPS_MAX, { error: says(`"steps" may have at most ${SKILL_STEPS_MAX} steps`, 'merge small steps') })
    .describe('The procedure, step by step, as guidance for a later conversation.'),
  tools: z
    .array(patternField('tools', TOOL_ID, 'must name tools by id, e.g. "fs.read"', 'A tool id.'), {
      error: says('"tools" must be a list of tool ids'),
    })
    .max(SKILL_TOOLS_MAX, { error: says(`"tools" may name at most ${SKILL_TOOLS_MAX} tools`) })
    .describe('The tools the steps expect to use (they grant nothing: a later conversation uses only what it holds).'),
});

/** The canonical content: whitespace trimmed, tools deduplicated and sorted. */
export function canonicalSkill(p: SkillContent): SkillContent {
  return {
    name: p.name,
    summary: p.summary.trim(),
    whenToUse: p.whenToUse.trim(),
    steps: p.steps.map((s) => s.trim()),
    tools: [...new Set(p.tools)].sort(),
  };
}
