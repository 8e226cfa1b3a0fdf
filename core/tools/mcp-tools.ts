/**
 * `mcp.call`: one generic descriptor for every tool of every configured MCP server
 * (amendment 2026-12-02-mcp-call-scope). Input `{server, tool, arguments}`; scope
 * `mcp.call:<server>/<tool>`. The workflow scope-checks it from the input alone, so the set of
 * discovered tools never has to be known in the (deterministic) workflow; the model is told
 * which server/tool pairs exist through {@link mcpToolSpec}.
 *
 * No tier ceiling holds `mcp.call` (Kernel aside): an operator opts in per tier with
 * AIVYX_MCP_TIERS, parsed by {@link parseMcpTierGrants} and applied to the ceiling with
 * {@link mcpCeiling}.
 */
import { CapabilitySet } from '../capability/capability-set.js';
import { Scope } from '../capability/scope.js';
import type { TrustTier } from '../capability/trust-tier.js';
import { AivyxError } from '../errors.js';
import type { ToolSpec } from '../llm.js';
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { patternField, says } from './fields.js';

/** Validated input of `mcp.call`. */
export interface McpCallInput {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/** A server name: no '/', '*', '?' or ':' so `<server>/<tool>` is unambiguous and never a glob. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** An MCP tool name as the spec allows it (letters, digits, '_', '-', '.'), never a glob. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The scope of one MCP tool: `mcp.call:<server>/<tool>`. */
export function mcpScope(server: string, tool: string): string {
  return `mcp.call:${server}/${tool}`;
}

/** `mcp.call`: call one tool of a configured MCP server. */
export const mcpCallTool = defineTool({
  id: 'mcp.call',
  description:
    'Call a tool of a configured MCP server. Input {server, tool, arguments}. Returns {content, structuredContent, isError}. Not re-run if interrupted.',
  input: () =>
    z.strictObject({
      server: patternField(
        'server',
        MCP_SERVER_NAME,
        'must be a configured MCP server name (letters, digits, "_", "-")',
        'The MCP server name.',
      ),
      tool: patternField(
        'tool',
        MCP_TOOL_NAME,
        'must be an MCP tool name (letters, digits, "_", "-", ".")',
        'The tool name on that server.',
      ),
      // Null is what some models send for "no arguments": it means {}.
      arguments: z
        .record(z.string(), z.unknown(), { error: says('"arguments" must be a JSON object') })
        .nullable()
        .describe("The tool's arguments (its own input schema).")
        .optional(),
    }),
  canonical: (i): McpCallInput => ({ server: i.server, tool: i.tool, arguments: i.arguments ?? {} }),
  scope: { base: 'mcp.call', of: (i) => mcpScope(i.server, i.tool) },
  // An MCP tool's effects are unknown to us: treat it like shell.exec.
  idempotency: 'at-most-once',
  // A server's output is its own; effect unless the operator marks the server's tool read-only.
  // Untrusted unless the owner vouches for the server (AIVYX_MCP_TRUSTED): the worker labels each result.
  provenance: { output: 'depends', effect: true },
});

export const parseMcpCallInput = mcpCallTool.parse;

/** One tool a server advertised (what `tools/list` returned, trimmed). */
export interface DiscoveredMcpTool {
  server: string;
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  /** The server declares the tool does not change anything (`annotations.readOnlyHint`): believed only where the owner says so. */
  readOnly?: boolean;
}

/**
 * The model-facing spec of `mcp.call` listing the discovered tools (id stays `mcp.call`, so the
 * workflow's `findTool` and scope check are unchanged). Tools with names the scope grammar cannot
 * carry are left out. Deterministic for a given list (sorted).
 */
export function mcpToolSpec(tools: readonly DiscoveredMcpTool[]): ToolSpec {
  const usable = tools
    .filter((t) => MCP_SERVER_NAME.test(t.server) && MCP_TOOL_NAME.test(t.name))
    .sort((a, b) => (a.server + '/' + a.name < b.server + '/' + b.name ? -1 : 1));
  const lines = usable.map(
    (t) =>
      `- server "${t.server}", tool "${t.name}": ${(t.description ?? '').replace(/\s+/g, ' ').slice(0, 300)}${t.inputSchema ? ` arguments schema: ${JSON.stringify(t.inputSchema).slice(0, 1000)}` : ''}`,
  );
  return {
    id: mcpCallTool.id,
    description: `${mcpCallTool.description}${lines.length > 0 ? `\nAvailable:\n${lines.join('\n')}` : '\nNo MCP tools are available.'}`,
    inputSchema: mcpCallTool.inputSchema,
  };
}

/** Per-tier opt-in: the `mcp.call` scopes an operator adds to a tier's ceiling. */
export type McpTierGrants = Partial<Record<Exclude<TrustTier, 'Kernel'>, string[]>>;

/**
 * Parses AIVYX_MCP_TIERS: `Tier=scope,scope;Tier=scope`, e.g.
 * `Trusted=mcp.call:echo/*;SemiTrusted=mcp.call:echo/echo`. Only `mcp.call` scopes are accepted
 * (this is not a way to widen any other base); bare `mcp.call` is accepted only as written. Throws
 * AivyxError('Config').
 */
export function parseMcpTierGrants(raw: string | undefined): McpTierGrants {
  const out: McpTierGrants = {};
  if (raw === undefined || raw.trim() === '') return out;
  for (const part of raw
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const tier = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (tier !== 'Trusted' && tier !== 'SemiTrusted' && tier !== 'Untrusted') {
      throw new AivyxError('Config', `AIVYX_MCP_TIERS: unknown tier "${tier}"`, {
        hint: 'write Trusted=mcp.call:<server>/<tool-glob>;SemiTrusted=...',
      });
    }
    const scopes = (eq < 0 ? '' : part.slice(eq + 1))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const s of scopes) {
      let scope: Scope;
      try {
        scope = Scope.parse(s);
      } catch (e) {
        throw new AivyxError('Config', `AIVYX_MCP_TIERS: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      if (scope.base !== 'mcp.call') throw new AivyxError('Config', `AIVYX_MCP_TIERS: only mcp.call scopes may be added, got "${s}"`);
    }
    out[tier] = [...(out[tier] ?? []), ...scopes];
  }
  return out;
}

/** A tier's ceiling plus the operator's `mcp.call` opt-in for it (Kernel's ceiling already holds mcp.call). */
export function mcpCeiling(ceiling: CapabilitySet, tier: TrustTier, grants: McpTierGrants): CapabilitySet {
  if (tier === 'Kernel') return ceiling;
  const extra = grants[tier] ?? [];
  return extra.length === 0 ? ceiling : CapabilitySet.from([...ceiling.toJSON(), ...extra]);
}
