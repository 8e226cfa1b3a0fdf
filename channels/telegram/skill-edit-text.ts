/**
 * What `/skilledit NAME` reads from the rest of its message: the parts of a skill to replace, one
 * per line, in the shape `/skill NAME` shows them — so on a phone the owner copies the skill, changes
 * a line and sends it back after `/skilledit NAME`. Pure: the owner's surface checks the result as
 * `skills.propose` checks a proposal.
 */

/** The parts an edit replaces. */
export interface SkillEditText {
  summary?: string;
  whenToUse?: string;
  steps?: string[];
  tools?: string[];
}

/** How to write an edit (the reply to a message it cannot read). */
export const SKILL_EDIT_FORMAT = [
  'Write the parts to change on lines after /skilledit NAME, as /skill NAME shows them:',
  'Summary: one line',
  'When: when to use it',
  '1. first step',
  '2. next step (any numbered line: the steps, all of them)',
  'Tools: fs.read, fs.write',
].join('\n');

const STEP = /^\d{1,2}[.)]\s+(.+)$/;
/** `NAME vN: summary`, the first line of `/skill NAME`: its summary. */
const HEADER = /^[a-z][a-z0-9-]{1,47} v\d+:\s*(.+)$/;
const FIELD = /^(summary|when|when to use|tools|tools it expects \(it grants none\)):\s*(.*)$/i;
/** The provenance line `/skill` shows: the approver's to read, not the owner's to edit. */
const PROVENANCE = /^proposed after untrusted content:/i;

/** The changes in `body` (the lines after the name), or why it cannot be read. */
export function parseSkillEdit(body: string): { changes: SkillEditText } | { problem: string } {
  const changes: SkillEditText = {};
  const steps: string[] = [];
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || PROVENANCE.test(line)) continue;
    const step = STEP.exec(line);
    const header = HEADER.exec(line);
    const field = FIELD.exec(line);
    if (step) steps.push(step[1]!);
    else if (header) changes.summary = header[1]!;
    else if (field) setField(changes, field[1]!.toLowerCase(), field[2]!.trim());
    else return { problem: `I could not read "${line.slice(0, 60)}".` };
  }
  if (steps.length > 0) changes.steps = steps;
  return Object.keys(changes).length > 0 ? { changes } : { problem: 'Nothing to change.' };
}

function setField(changes: SkillEditText, key: string, value: string): void {
  if (key === 'summary') changes.summary = value;
  else if (key.startsWith('when')) changes.whenToUse = value;
  else changes.tools = value === '' || value === 'none' ? [] : value.split(/[\s,]+/).filter(Boolean);
}
