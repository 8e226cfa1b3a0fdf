/**
 * The parts of a step's prompt that do not depend on the session: which tools a turn is offered,
 * how their schemas go on the wire, and how entries are counted against the history budget.
 */
import { Scope } from '../../core/capability/index.js';
import type { HistoryEntry } from '../../core/channel.js';
import type { ToolSpec } from '../../core/llm.js';
import type { TokenUsage } from '../../core/spend.js';
import { findTool, toolSpecs } from '../../core/tool-catalog.js';
import { toolOffer, toolsLoadSpec } from '../../core/tool-offer.js';
import { countTokens, type TokenFamily } from './token-count.js';
import { compactSchema } from './wire-schema.js';

/**
 * The tools a turn holding `effective` could ever run: those whose scope base it holds in some
 * form (a qualified grant still offers the tool; the scope check decides each call). A SemiTrusted
 * turn is not shown the tools its ceiling never grants: they cost tokens and invite refusals.
 */
export function offeredToolIds(toolIds: readonly string[], effective: readonly string[]): string[] {
  const bases = new Set(effective.flatMap((s) => Scope.tryParse(s)?.base ?? []));
  return toolIds.filter((id) => {
    const def = findTool(id);
    return def !== undefined && bases.has(def.scopeBase);
  });
}

/**
 * The specs a step offers, before the wire form: with `loaded` (the turn's deferred tools loaded so
 * far), the core tools, then `tools.load` whose description indexes the deferred ones, then those
 * loaded (core/tool-offer.ts); without it (runs from before deferred tools), every tool in full.
 * Ids outside the catalog are dropped.
 */
export function offeredSpecs(toolIds: readonly string[], loaded: readonly string[] | undefined): ToolSpec[] {
  const offer = toolOffer(
    toolIds.filter((id) => findTool(id) !== undefined),
    loaded,
  );
  if (offer.deferred.length === 0) return toolSpecs(offer.core);
  return [...toolSpecs(offer.core), toolsLoadSpec(offer.deferred), ...toolSpecs(offer.loaded)];
}

/** A spec as the model is shown it: the schema without the bounds the tool's parser enforces (wire-schema.ts). */
export function wireSpec(spec: ToolSpec): ToolSpec {
  return { ...spec, inputSchema: compactSchema(spec.inputSchema) };
}

/** Tokens a message costs beyond its text (role markers and separators, as both formats frame one). */
export const MESSAGE_FRAMING_TOKENS = 4;

/** Counts history entries for `family`'s models. */
export function entryCounter(family: TokenFamily): (e: HistoryEntry) => number {
  return (e) => countTokens(e.text, family) + MESSAGE_FRAMING_TOKENS;
}

/** Two usages as one (a step and the compaction before it). */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const cached = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  const written = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cached ? { cachedInputTokens: cached } : {}),
    ...(written ? { cacheWriteTokens: written } : {}),
  };
}
