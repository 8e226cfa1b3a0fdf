/** The mcp.call base: its scope form, in no tier's default ceiling, and the operator's AIVYX_MCP_TIERS opt-in. */
import { describe, expect, it } from 'vitest';
import {
  CapabilitySet,
  KNOWN_SCOPE_BASES,
  Scope,
  TRUST_TIERS,
  effectiveCapabilities,
  qualifierKindOf,
  tierCeiling,
} from '../../core/capability/index.js';
import { NO_TIER_BY_DEFAULT } from '../../core/capability/trust-tier.js';
import { AivyxError } from '../../core/errors.js';
import { mcpCallTool, mcpCeiling, parseMcpTierGrants } from '../../core/tools/mcp-tools.js';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';

const call = (tool: string) => mcpCallTool.requiredScope({ server: 'echo', tool, arguments: {} });

describe('mcp.call scope', () => {
  it('is a known base with simple-glob qualifiers', () => {
    expect(KNOWN_SCOPE_BASES).toContain('mcp.call');
    expect(qualifierKindOf('mcp.call')).toBe('glob');
    expect(Scope.parse('mcp.call:echo/*').toString()).toBe('mcp.call:echo/*');
    expect(TOOL_CATALOG.filter((t) => t.scopeBase === 'mcp.call')).toEqual([mcpCallTool]);
  });

  it('is derived from server and tool, which can never be globs or contain "/"', () => {
    expect(call('echo')).toBe('mcp.call:echo/echo');
    expect(mcpCallTool.requiredScope({ server: 'echo', tool: 'a.b-c_d' })).toBe('mcp.call:echo/a.b-c_d');
    for (const input of [
      { server: 'e*', tool: 'x' },
      { server: 'e/x', tool: 'y' },
      { server: 'e', tool: '*' },
      { server: 'e', tool: 'a/b' },
      { server: 'e', tool: 'x', arguments: [] },
      { server: 'e', tool: 'x', extra: 1 },
      { server: 'e:x', tool: 'y' },
    ]) {
      expect(() => mcpCallTool.requiredScope(input)).toThrow(AivyxError);
    }
    const held = CapabilitySet.from(['mcp.call:echo/*']);
    expect(held.grants(call('echo'))).toBe(true);
    expect(held.grants('mcp.call:echoes/echo')).toBe(false);
    expect(held.grants('mcp.call:other/echo')).toBe(false);
  });

  it('is granted to no tier by default (Kernel aside)', () => {
    expect([...NO_TIER_BY_DEFAULT]).toEqual(['mcp.call']);
    for (const tier of ['Trusted', 'SemiTrusted', 'Untrusted'] as const) {
      const ceiling = tierCeiling(tier);
      expect(ceiling.scopes.some((s) => s.base === 'mcp.call')).toBe(false);
      // Whatever the agent holds, bare or qualified, the effective set has no mcp.call.
      const eff = effectiveCapabilities(CapabilitySet.from(['mcp.call', 'mcp.call:echo/*']), tier);
      expect(eff.grants(call('echo'))).toBe(false);
    }
    expect(tierCeiling('Kernel').grants(call('echo'))).toBe(true);
    expect(TRUST_TIERS).toHaveLength(4);
  });

  it('an operator opts a tier in with AIVYX_MCP_TIERS; the agent grant still caps it', () => {
    const grants = parseMcpTierGrants('Trusted=mcp.call:echo/*; SemiTrusted=mcp.call:echo/echo');
    expect(grants).toEqual({ Trusted: ['mcp.call:echo/*'], SemiTrusted: ['mcp.call:echo/echo'] });
    const agent = CapabilitySet.from(['mcp.call:echo/*']);
    const trusted = agent.intersect(mcpCeiling(tierCeiling('Trusted'), 'Trusted', grants));
    expect(trusted.grants(call('echo'))).toBe(true);
    expect(trusted.grants(call('slow'))).toBe(true);
    expect(trusted.grants('mcp.call:other/x')).toBe(false);
    const semi = agent.intersect(mcpCeiling(tierCeiling('SemiTrusted'), 'SemiTrusted', grants));
    expect(semi.grants(call('echo'))).toBe(true);
    expect(semi.grants(call('slow'))).toBe(false);
    const untrusted = agent.intersect(mcpCeiling(tierCeiling('Untrusted'), 'Untrusted', grants));
    expect(untrusted.grants(call('echo'))).toBe(false);
    // An agent without the grant gets nothing even from an opted-in tier.
    expect(
      CapabilitySet.from(['fs.read'])
        .intersect(mcpCeiling(tierCeiling('Trusted'), 'Trusted', grants))
        .grants(call('echo')),
    ).toBe(false);
    // The other tiers' ceilings are untouched.
    expect(mcpCeiling(tierCeiling('Trusted'), 'Trusted', {})).toBe(tierCeiling('Trusted'));
  });

  it('AIVYX_MCP_TIERS accepts only mcp.call scopes and real tiers', () => {
    expect(parseMcpTierGrants(undefined)).toEqual({});
    expect(parseMcpTierGrants('  ')).toEqual({});
    for (const raw of ['Kernel=mcp.call:echo/*', 'Trusted=fs.read', 'Trusted=shell.exec:ls', 'Root=mcp.call:a/b', 'Trusted=mcp.cal:x']) {
      let kind: string | undefined;
      try {
        parseMcpTierGrants(raw);
      } catch (e) {
        kind = e instanceof AivyxError ? e.kind : 'other';
      }
      expect(kind, raw).toBe('Config');
    }
  });
});
