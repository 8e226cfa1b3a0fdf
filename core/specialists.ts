/**
 * Specialists (seed: the Nonagon, "a lead convening ≤ 9 attenuated, in-process specialists on the one
 * daemon/chain"): helpers the owner defines in configuration, each a name, instructions, a model, the
 * capability set it may use at most, a budget slice and whether it may run beside others. A lead turn
 * asks one with `agent.delegate:<name>`; it runs as a child turn workflow whose effective set is the
 * lead's ∩ the specialist's, never wider (DESIGN.md, "Specialists"). Pure and workflow-safe.
 */
import { z } from 'zod';
import { CapabilitySet } from './capability/index.js';
import { Scope } from './capability/scope.js';
import { AivyxError } from './errors.js';
import type { SpendBudget } from './spend.js';

/** At most this many specialists run for one lead at a time (the seed's nine). */
export const MAX_RUNNING_SPECIALISTS = 9;

/** What a specialist's name looks like: it is the qualifier of `agent.delegate:<name>` and part of a workflow id. */
export const SPECIALIST_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** One specialist as the owner defines it. */
export interface Specialist {
  name: string;
  /** What it is told on every step, after the system prompt. */
  instructions: string;
  /** The model it asks (`<provider>:<model>`, as AIVYX_LLM); its provider is built when the worker starts. Absent: the worker's own. */
  model?: string;
  /** The most it may ever hold; a delegation gives it this ∩ the lead's effective set. */
  capabilities: string[];
  /** Its slice of spend per delegation (tokens and/or dollars); absent: the worker's turn budget alone. */
  budget?: SpendBudget;
  /** May it run beside other delegations of the same step (false: the lead's step runs it alone). */
  parallel: boolean;
}

const scopeString = z.string().superRefine((s, ctx) => {
  if (!Scope.tryParse(s)) ctx.addIssue({ code: 'custom', message: `"${s}" is not a valid scope` });
});

const budgetSchema = z.strictObject({
  tokens: z.number().int().positive().optional(),
  costUsd: z.number().positive().finite().optional(),
});

/** One specialist's definition as configuration states it. */
export const specialistSchema = z.strictObject({
  name: z.string().regex(SPECIALIST_NAME, 'must be lower-case letters, digits and dashes (at most 32), starting with a letter'),
  instructions: z.string().min(1).max(4_000),
  model: z
    .string()
    .regex(/^[a-z]+:.+$/, 'must be <provider>:<model>')
    .max(200)
    .optional(),
  capabilities: z.array(scopeString).min(1).max(64),
  budget: budgetSchema.optional(),
  parallel: z.boolean().default(true),
});

/** The whole list: names are unique. */
export const specialistsSchema = z
  .array(specialistSchema)
  .max(64)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    for (const [i, s] of list.entries()) {
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${s.name}" is defined twice` });
      seen.add(s.name);
    }
  });

/** Parses the owner's JSON list of specialists; throws AivyxError('Config') naming the first bad field. */
export function parseSpecialists(raw: unknown): Specialist[] {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new AivyxError('Config', 'specialists must be a JSON array', {
        hint: 'e.g. [{"name":"researcher","instructions":"…","capabilities":["net.fetch"]}]',
      });
    }
  }
  const parsed = specialistsSchema.safeParse(value);
  if (parsed.success) return parsed.data.map(withCanonicalScopes);
  const issue = parsed.error.issues[0]!;
  const at = issue.path.map(String).join('.') || '(list)';
  throw new AivyxError('Config', `specialists: ${at}: ${issue.message}`, { hint: 'see docs/SPECIALISTS.md' });
}

/** A parsed specialist with its capabilities in canonical form (what intersections and the audit log use). */
function withCanonicalScopes(s: z.output<typeof specialistSchema>): Specialist {
  const { model, budget, ...rest } = s;
  return {
    ...rest,
    capabilities: CapabilitySet.from(s.capabilities).toJSON(),
    ...(model ? { model } : {}),
    ...(budget && (budget.tokens !== undefined || budget.costUsd !== undefined) ? { budget: cleanBudget(budget) } : {}),
  };
}

function cleanBudget(b: { tokens?: number | undefined; costUsd?: number | undefined }): SpendBudget {
  return { ...(b.tokens !== undefined ? { tokens: b.tokens } : {}), ...(b.costUsd !== undefined ? { costUsd: b.costUsd } : {}) };
}

/**
 * The specialists that ship: a researcher that reads the web and memory, and a writer that writes
 * only under `notesDir` (the owner's workspace `notes/` by default).
 */
export function defaultSpecialists(notesDir: string): Specialist[] {
  return parseSpecialists([
    {
      name: 'researcher',
      instructions:
        'You research one question: read the pages and memories you need, then answer in a short paragraph with the sources you used. You change nothing.',
      capabilities: ['net.fetch', 'memory.read', 'llm.call'],
      budget: { tokens: 50_000 },
    },
    {
      name: 'writer',
      instructions: `You write what you are asked to as files under ${notesDir}; answer with the paths you wrote.`,
      capabilities: [`fs.write:${notesDir}/**`, `fs.metadata:${notesDir}/**`, 'llm.call'],
      budget: { tokens: 50_000 },
    },
  ]);
}

/** What a delegated child may hold: the lead's effective set ∩ the specialist's set (never wider than either). */
export function delegatedCapabilities(lead: CapabilitySet, specialist: CapabilitySet): CapabilitySet {
  return lead.intersect(specialist);
}

/**
 * The child turn's workflow id for the lead's call `activityId` (`tool-<step>-<i>`): derived from the
 * call, so a retried call finds its own child and the UI shows the tree by id.
 */
export function delegateChildId(leadTurnId: string, activityId: string, specialist: string): string {
  return `${leadTurnId}/${activityId}/${specialist}`;
}

/** A child turn id's parts (`<lead>/tool-<step>-<i>/<specialist>`), or undefined for any other id. */
export function parseDelegateChildId(id: string): { leadTurnId: string; specialist: string } | undefined {
  const m = /^(.+)\/tool-\d{1,6}-\d{1,6}\/([^/]+)$/.exec(id);
  if (!m?.[1] || !m[2] || !SPECIALIST_NAME.test(m[2])) return undefined;
  return { leadTurnId: m[1], specialist: m[2] };
}

/** The tighter of two budgets, field by field; absent means no limit. */
export function tighterBudget(a: SpendBudget | undefined, b: SpendBudget | undefined): SpendBudget | undefined {
  if (!a) return b;
  if (!b) return a;
  const min = (x?: number, y?: number) => (x === undefined ? y : y === undefined ? x : Math.min(x, y));
  return cleanBudget({ tokens: min(a.tokens, b.tokens), costUsd: min(a.costUsd, b.costUsd) });
}

/** What a specialist's turn is told after the system prompt, on every step. */
export function specialistPrompt(s: Specialist): string {
  return `You are the specialist "${s.name}", asked by a lead assistant for one task. Answer the lead, not the person. ${s.instructions}`;
}

/** `agent.delegate`'s description for the model, with the configured specialists (name: what it is told, first sentence). */
export function specialistsDescription(base: string, specialists: readonly Specialist[]): string {
  if (specialists.length === 0) return `${base}\nNo specialist is configured.`;
  const line = (s: Specialist) => {
    const first = s.instructions.split(/(?<=\.)\s/)[0] ?? s.instructions;
    return `- ${s.name}: ${first.length > 160 ? `${first.slice(0, 157)}...` : first}`;
  };
  return [`${base}\nSpecialists:`, ...specialists.map(line)].join('\n');
}
