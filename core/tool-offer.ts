/**
 * Deferred tools: what a turn is offered in full and what only by name. A small core set is offered
 * with its schemas; the other tools the turn's capabilities grant are listed, one short line each,
 * in the description of `tools.load` (core/tools/tools-load.ts), whose call makes their schemas
 * offered from the next step on. Offering is an optimisation, never authority: a call to a granted
 * tool that was not loaded runs exactly as before (the scope check decides every call), and only
 * granted tools can be loaded. Pure and workflow-safe: the workflow keeps the loaded set as state.
 */
import { z } from 'zod';
import { AivyxError, type AivyxErrorData } from './errors.js';
import type { ToolSpec } from './llm.js';
import type { ToolOutcome } from './outcomes.js';
import { findTool } from './tool-catalog.js';
import { TOOLS_LOAD, TOOLS_LOAD_MAX, toolsLoadTool } from './tools/tools-load.js';

/** Offered in full to every turn that grants them: what most turns use (read, write, run, remember, recall). */
export const CORE_TOOLS: readonly string[] = Object.freeze(['fs.read', 'fs.write', 'shell.exec', 'memory.write', 'memory.recall']);

/** What one step is offered: core tools, the index of deferred ones, and those loaded so far. */
export interface ToolOffer {
  /** Granted core tools, in catalog order. */
  core: string[];
  /** Every granted tool offered by name only until loaded, in catalog order (the index never changes within a session). */
  deferred: string[];
  /** Deferred tools loaded so far, sorted: appended after `tools.load`, so earlier bytes of the prefix stay the same. */
  loaded: string[];
}

/**
 * The offer for a turn granted `granted` (catalog ids, catalog order) that has loaded `loaded`.
 * `loaded` undefined (a run from before deferred tools): every granted tool in full, as then.
 */
export function toolOffer(granted: readonly string[], loaded: readonly string[] | undefined): ToolOffer {
  if (loaded === undefined) return { core: [...granted], deferred: [], loaded: [] };
  const deferred = granted.filter((id) => !CORE_TOOLS.includes(id));
  const have = new Set(loaded);
  return {
    core: granted.filter((id) => CORE_TOOLS.includes(id)),
    deferred,
    loaded: deferred.filter((id) => have.has(id)).sort(),
  };
}

/** A tool's line in the index: its summary, else its description up to the first sentence or colon; at most 90 characters. */
export function indexLine(id: string): string {
  const tool = findTool(id);
  const description = tool?.description ?? '';
  const first = tool?.summary ?? description.split(/(?<=[a-z)])(?:\. |: |; |\.$)/)[0] ?? description;
  const line = first.length > 90 ? `${first.slice(0, 87)}...` : first;
  return `${id}: ${line}`;
}

/** The `tools.load` spec for an index of deferred tools: its description carries the index. */
export function toolsLoadSpec(deferred: readonly string[]): ToolSpec {
  return {
    id: TOOLS_LOAD,
    description: [toolsLoadTool.description, ...deferred.map(indexLine)].join('\n'),
    inputSchema: toolsLoadTool.inputSchema,
  };
}

/** What a `tools.load` call gave: the new loaded set and the (granted) names asked for, or why nothing was loaded. */
export type LoadResult = { ok: true; loaded: string[]; requested: string[] } | { ok: false; error: AivyxErrorData };

/**
 * Answers a `tools.load` call of a turn granted `granted` that loaded `loaded` so far. All or
 * nothing: a name the turn's capabilities do not grant (or no tool at all) loads nothing and says
 * which; asking for one already offered in full is no error.
 */
export function loadTools(input: unknown, granted: readonly string[], loaded: readonly string[]): LoadResult {
  let names: string[];
  try {
    names = toolsLoadTool.parse(input).tools;
  } catch (e) {
    return { ok: false, error: e instanceof AivyxError ? e.toData() : { kind: 'InvalidScope', message: String(e) } };
  }
  const refused = names.filter((n) => !granted.includes(n));
  const loadable = granted.filter((id) => !CORE_TOOLS.includes(id));
  if (refused.length > 0)
    return {
      ok: false,
      error: {
        kind: 'CapabilityDenied',
        message: `tools.load: ${refused.map((n) => `"${n}"`).join(', ')} ${refused.length === 1 ? 'is' : 'are'} not a tool this conversation may use; nothing was loaded`,
        hint: loadable.length > 0 ? `loadable here: ${loadable.join(', ')}` : 'no tool is loadable here',
        detail: { tools: refused },
      },
    };
  const added = names.filter((n) => loadable.includes(n) && !loaded.includes(n));
  return { ok: true, loaded: [...new Set([...loaded, ...added])].sort(), requested: names };
}

const carriedSchema = z.strictObject({ loadedTools: z.array(z.string().max(64)).max(TOOLS_LOAD_MAX).optional() });

/** The loaded tools a session passed on (attacker-writable input of the turn): a malformed value counts as none. */
export function carriedTools(raw: unknown): string[] {
  if (raw === undefined) return [];
  const parsed = carriedSchema.safeParse(raw);
  return parsed.success ? (parsed.data.loadedTools ?? []) : [];
}

/** What the model is told a `tools.load` call did. */
export function loadOutcome(result: LoadResult): ToolOutcome {
  if (!result.ok) return { status: 'Failed', error: result.error };
  return {
    status: 'Completed',
    output: { loaded: result.requested, note: 'their full schemas come with your next step' },
    verified: 'NotApplicable',
  };
}
