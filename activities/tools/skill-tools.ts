/**
 * `skills.propose`, `skills.list`, `skills.invoke` over a SkillStore. A proposal is stored only
 * under a person's approval of this exact call (the turn's one-shot grant, which the worker
 * verified); without one it escalates, whatever the confirm-first setting says. A skill is guidance:
 * loading it names the tools it expects and which of them this turn cannot use, and grants nothing.
 */
import { flatLabel } from '../../core/taint.js';
import { findTool } from '../../core/tool-catalog.js';
import { skillInvokeTool } from '../../core/tools/skill-invoke.js';
import { skillListTool } from '../../core/tools/skill-list.js';
import { skillProposeTool } from '../../core/tools/skill-propose.js';
import { AivyxError } from '../../core/errors.js';
import type { SkillStore, SkillSummary } from './skill-port.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Ports of the skills tools. */
export interface SkillToolDeps {
  store: SkillStore;
  /** Clock for new versions (tests pin it); default Date.now. */
  now?: () => number;
}

/** Output of `skills.propose`. */
export interface SkillProposeOutput {
  name: string;
  version: number;
}

/** Output of `skills.list`. */
export interface SkillListOutput {
  skills: { name: string; summary: string }[];
}

/** Output of `skills.invoke`. */
export interface SkillInvokeOutput {
  name: string;
  version: number;
  summary: string;
  whenToUse: string;
  steps: string[];
  tools: string[];
  /** Tools the skill names that this conversation does not hold: the skill does not make them callable. */
  unavailableTools: string[];
  note: string;
}

/** The tools a skill names that `held` grants no call of (a tool the worker does not know counts as unavailable). */
function unavailable(tools: readonly string[], held: readonly string[]): string[] {
  const bases = new Set(held.map((s) => s.split(':')[0]));
  return tools.filter((id) => {
    const def = findTool(id);
    return def === undefined || !bases.has(def.scopeBase);
  });
}

/** The labels of listed skills proposed after untrusted content. */
function listLabel(skills: readonly SkillSummary[]): string | undefined {
  return flatLabel(skills.flatMap((s) => (s.untrusted ? [s.untrusted] : []))) || undefined;
}

/** The three skills tools, in catalog order. */
export function createSkillTools(deps: SkillToolDeps): ToolImplementation[] {
  const { store } = deps;
  const now = deps.now ?? Date.now;

  const propose = implementTool(skillProposeTool, {
    async run(req, ctx) {
      // The approval is the turn's verified one-shot grant for exactly this call: nothing else stores a skill.
      if (!ctx.approval)
        return { kind: 'escalate', reason: `skills.propose "${req.name}": a person must approve the whole skill before it is stored` };
      ctx.signal.throwIfAborted();
      const untrusted = ctx.taint?.length ? flatLabel(ctx.taint) : undefined;
      const { skill } = await store.store(req, { approval: ctx.approval, at: now(), ...(untrusted ? { untrusted } : {}) });
      const output: SkillProposeOutput = { name: skill.name, version: skill.version };
      const back = await store.get(skill.name, skill.version);
      return { kind: 'completed', output, verified: back?.approval.gateId === ctx.approval.gateId ? 'Verified' : 'Unverified' };
    },
  });

  const list = implementTool(skillListTool, {
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      const words = (req.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
      const skills = (await store.list()).filter((s) => words.every((w) => `${s.name} ${s.summary}`.toLowerCase().includes(w)));
      const output: SkillListOutput = { skills: skills.map((s) => ({ name: s.name, summary: s.summary })) };
      const untrusted = listLabel(skills);
      return { kind: 'completed', output, verified: 'NotApplicable', ...(untrusted ? { untrusted } : {}) };
    },
  });

  const invoke = implementTool(skillInvokeTool, {
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      const skill = await store.get(req.name);
      if (!skill)
        throw new AivyxError('NotFound', `no approved skill named "${req.name}"`, {
          detail: { kind: 'skill', id: req.name },
          hint: 'see skills.list',
        });
      const output: SkillInvokeOutput = {
        name: skill.name,
        version: skill.version,
        summary: skill.summary,
        whenToUse: skill.whenToUse,
        steps: skill.steps,
        tools: skill.tools,
        unavailableTools: unavailable(skill.tools, ctx.held),
        note: 'Guidance only: follow these steps with the tools you have; this skill grants no tool or permission.',
      };
      return { kind: 'completed', output, verified: 'NotApplicable', ...(skill.untrusted ? { untrusted: skill.untrusted } : {}) };
    },
  });

  return [propose, list, invoke];
}
