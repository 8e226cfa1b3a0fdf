/**
 * The worker's half of the value model (core/values.ts): an untrusted result is held as a value and
 * the model gets its handle; a call's references are substituted before its checks, so the scope
 * re-check and the taint decision see what will really run, and the worker knows which fields came
 * from which untrusted source. A value is usable only by the turn that read it (or a turn that
 * continues it, through its verified context) and only until it expires.
 */
import { createHash } from 'node:crypto';
import { AivyxError } from '../../core/errors.js';
import type { ToolOutcome } from '../../core/outcomes.js';
import { authorityLeaves, mcpFields, mcpRule, policyAction, stricter, taintGoverns } from '../../core/taint.js';
import { findTool } from '../../core/tool-catalog.js';
import type { ToolCall } from '../../core/tools.js';
import { refsByField, refsIn, substituteRefs, valueHandle, valueRefusal, valueText, VALUE_TTL_MS } from '../../core/values.js';
import { errorData } from '../failure.js';
import type { HeldValue, ToolCallFacts } from '../ports.js';
import type { WorkerTaint } from './call-taint.js';
import type { TurnContext } from './context.js';
import type { RunToolInput } from './types.js';

/** A value a call used, and the field it filled. */
export interface UsedValue {
  field: string;
  id: string;
  label: string;
}

/** A call with its references substituted, or why it cannot run. */
export type ResolvedCall = { call: ToolCall; used: UsedValue[] } | { failed: ToolOutcome };

/**
 * Tools that account for the values they are given themselves (their results do not carry the values'
 * sources: run-tool.ts), and the only fields they take them in. value.read reads `from` and asks
 * `question`; its choices, type and bounds are the caller's own, since a choice comes back shown. A
 * specialist starts tainted by its `task`; which specialist runs is the caller's choice.
 */
export const ACCOUNTS_FOR_VALUES: Readonly<Record<string, readonly string[]>> = {
  'value.read': ['from', 'question'],
  'agent.delegate': ['task'],
};

/** The refusal of a value in a field where `tool` does not take one. */
function misplacedValue(tool: string, fields: Iterable<string>): ToolOutcome | undefined {
  const allowed = ACCOUNTS_FOR_VALUES[tool];
  const field = allowed && [...fields].find((f) => !allowed.includes(f));
  if (!allowed || field === undefined) return undefined;
  const where = allowed.map((f) => `"${f}"`).join(' or ');
  const error = new AivyxError('Tool', `${tool}: a value may stand only in ${where}, not in "${field}"`, {
    hint: `write "${field}" yourself; pass the value in ${where}`,
    detail: { tool, field },
  });
  return { status: 'Failed', error: error.toData() };
}

/** The value id of the result of call `idemKey` (the same on every attempt: a retry stores it once). */
export function valueIdOf(idemKey: string): string {
  return `v${createHash('sha256').update(idemKey).digest('hex').slice(0, 12)}`;
}

/** Holding, substituting and rendering values, over the turn's shared context. */
export function valueHolding({ deps, mcpClasses }: TurnContext) {
  const shown = new Set(deps.agent.showUntrusted ?? []);
  const policy = deps.agent.taintPolicy ?? {};
  const now = deps.now ?? Date.now;

  /** The values `ids` if this turn may use them: read by it, or by a call in its verified context. */
  async function usable(ids: string[], turnId: string, context: readonly string[]): Promise<Map<string, HeldValue>> {
    const found = new Map<string, HeldValue>();
    for (const id of new Set(ids)) {
      const v = await deps.values?.get(id);
      if (!v || (v.turnId !== turnId && !context.includes(v.idemKey))) throw valueRefusal(id, 'is not a value this turn read');
      if (v.expiresAt <= now()) throw valueRefusal(id, `expired at ${new Date(v.expiresAt).toISOString()}`);
      found.set(id, v);
    }
    return found;
  }

  return {
    /** The call with every reference substituted and the values it used, field by field. */
    async resolve(input: RunToolInput): Promise<ResolvedCall> {
      const byField = refsByField(fieldsOf(input.call));
      if (byField.size === 0) return { call: input.call, used: [] };
      const misplaced = misplacedValue(input.call.tool, byField.keys());
      if (misplaced) return { failed: misplaced };
      // withValues judges an MCP call by the classification its turn opened with (loaded once per worker).
      if (input.call.tool === 'mcp.call') await mcpClasses.load();
      try {
        const values = await usable([...byField.values()].flat(), input.turnId, input.context ?? []);
        const used = [...byField].flatMap(([field, ids]) => ids.map((id) => ({ field, id, label: values.get(id)!.label })));
        return { call: { ...input.call, input: substituteRefs(input.call.input, (id) => values.get(id)!.body) }, used };
      } catch (e) {
        return { failed: { status: 'Failed', error: errorData(e, 'NotFound') } };
      }
    },

    /**
     * What the values a call used add to its taint: their sources always (a memory written from a page
     * keeps the page's label); and an effect whose authority field holds one is the policy's to decide
     * (gate by default), naming the field — even in a turn that never saw untrusted text.
     */
    withValues(call: ToolCall, used: UsedValue[], taint: WorkerTaint, substituted: ToolCall): WorkerTaint {
      if (used.length === 0) return taint;
      const sources = [...new Set([...taint.sources, ...used.map((u) => u.label)])];
      const def = findTool(call.tool);
      // An MCP call is judged argument by argument, by the owner's classification of its tool.
      const rule = def && (mcpRule(def, call.input, mcpClasses.current()) ?? def);
      if (!rule || rule === 'read' || !taintGoverns(rule)) return { ...taint, sources };
      // A reference in an authority part of the call as the model wrote it (a step's wait time is content).
      const steering = authorityLeaves(rule, fieldsOf(call)).find(({ leaf }) => refsIn(leaf).length > 0)?.field;
      const field = steering ?? (rule.provenance.launders ? 'content' : undefined);
      if (field === undefined) return { ...taint, sources };
      const shows = steering ? shownValue(fieldsOf(substituted)[steering]) : undefined;
      return { sources, action: stricter(taint.action, policyAction(rule.id, policy)), field, ...(shows ? { shows } : {}) };
    },

    /** Holds an untrusted, completed result as a value, unless the owner chose to show this tool's results. */
    async hold(call: ToolCall, facts: ToolCallFacts, outcome: ToolOutcome, label: string | undefined) {
      if (!label || outcome.status !== 'Completed' || !deps.values || isShown(shown, call)) return undefined;
      const id = valueIdOf(facts.idemKey);
      const body = outcome.output;
      await deps.values.put({ id, turnId: facts.turnId, idemKey: facts.idemKey, label, body, expiresAt: now() + VALUE_TTL_MS });
      const handle = valueHandle(id, typeof body === 'string' ? 'text' : 'json', valueText(body).length, label);
      return { outcome: { ...outcome, output: handle } satisfies ToolOutcome, heldAs: id };
    },

    /** `text` with the references this turn may use replaced by their content (a reply to the owner). */
    async render(turnId: string, text: string, context: readonly string[]): Promise<string> {
      const ids = [...new Set([...refsByField({ text }).values()].flat())];
      const values = new Map<string, unknown>();
      for (const id of ids) {
        try {
          values.set(id, (await usable([id], turnId, context)).get(id)!.body);
        } catch (e) {
          values.set(id, `[${e instanceof AivyxError ? e.message : 'value unavailable'}]`);
        }
      }
      return substituteRefs(text, (id) => values.get(id)) as string;
    },
  };
}

/**
 * Longest authority value an approval request quotes whole (an address, a URL, argv): the approver
 * must see what will run, and a payload sits wherever the data put it, often at the end.
 */
export const SHOWN_MAX = 2000;
/** Of a longer value, its head and its tail are quoted, and how many characters between them are not. */
const SHOWN_HEAD = 1200;
const SHOWN_TAIL = 600;

/**
 * An authority value as an approval request quotes it: its text on one line (a control character
 * cannot forge a line of the request), whole up to {@link SHOWN_MAX} characters; beyond, head and
 * tail with the count left out, so the approver knows there is more than was shown.
 */
export function shownValue(value: unknown): string {
  const chars = [...valueText(value)].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c));
  if (chars.length <= SHOWN_MAX) return chars.join('');
  const left = chars.length - SHOWN_HEAD - SHOWN_TAIL;
  return `${chars.slice(0, SHOWN_HEAD).join('')} [… ${left} characters not shown …] ${chars.slice(-SHOWN_TAIL).join('')}`;
}

/** A call's input as values are attributed to it: by top-level field, and an MCP call by argument (`arguments.<name>`). */
function fieldsOf(call: ToolCall): Record<string, unknown> {
  return call.tool === 'mcp.call' ? mcpFields(call.input) : ((call.input ?? {}) as Record<string, unknown>);
}

/** True when the owner chose to show this call's untrusted results to the model (`AIVYX_SHOW_UNTRUSTED`). */
function isShown(shown: ReadonlySet<string>, call: ToolCall): boolean {
  if (shown.has(call.tool)) return true;
  const server = (call.input as { server?: unknown } | null)?.server;
  return call.tool === 'mcp.call' && typeof server === 'string' && shown.has(`mcp.call:${server}`);
}

/** The activity that renders a turn's final answer for the owner. */
export function valueActivities(ctx: TurnContext) {
  const holding = valueHolding(ctx);
  return {
    /** The answer with the values this verified turn read shown in place of their references. */
    async renderValues(input: { turnId: string; text: string; context?: string[] }): Promise<string> {
      if (!(await ctx.turnAuthority(input.turnId))) return input.text;
      return holding.render(input.turnId, input.text, input.context ?? []);
    },
  };
}
