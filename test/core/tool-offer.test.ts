/**
 * Deferred tools (core/tool-offer.ts): what a step offers in full and by name, what `tools.load`
 * may load (never more than the turn's capabilities grant), and what that costs on the wire — the
 * first turn of a Trusted CLI session with the default tools, counted as the Anthropic stand-in
 * of the token bench counts it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { anthropicRequestBody } from '../../activities/llm/anthropic.js';
import { offeredSpecs, offeredToolIds, wireSpec } from '../../activities/llm/step-prompt.js';
import { SYSTEM_PROMPT, turnContext } from '../../activities/llm/system-prompt.js';
import { loadTokenizer } from '../../activities/llm/token-count.js';
import { anthropicCounter } from '../../bench/token-standins.js';
import { CapabilitySet, tierCeiling, type TrustTier } from '../../core/capability/index.js';
import type { LlmStepRequest } from '../../core/llm.js';
import { textContent } from '../../core/message.js';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';
import { carriedTools, CORE_TOOLS, indexLine, loadTools, toolOffer } from '../../core/tool-offer.js';
import { TOOLS_LOAD } from '../../core/tools/tools-load.js';
import { DEFAULT_AGENT_CAPABILITIES } from '../../infra/config/env-table.js';

/** The tools a turn of `tier` is granted with the default capabilities (openTurn's `toolIds`). */
function grantedTo(tier: Exclude<TrustTier, 'Kernel'>): string[] {
  const effective = CapabilitySet.from(DEFAULT_AGENT_CAPABILITIES).intersect(tierCeiling(tier)).toJSON();
  return offeredToolIds(
    TOOL_CATALOG.map((t) => t.id),
    effective,
  );
}

const trusted = grantedTo('Trusted');
const semi = grantedTo('SemiTrusted');

describe('the offer', () => {
  it('a run from before deferred tools (no loaded set) offers every granted tool in full', () => {
    expect(toolOffer(trusted, undefined)).toEqual({ core: trusted, deferred: [], loaded: [] });
    expect(offeredSpecs(trusted, undefined).map((s) => s.id)).toEqual(trusted);
  });

  it('offers the core tools, then tools.load indexing every other granted tool, then what was loaded (sorted)', () => {
    const first = offeredSpecs(trusted, []);
    const core = trusted.filter((id) => CORE_TOOLS.includes(id));
    expect(first.map((s) => s.id)).toEqual([...core, TOOLS_LOAD]);
    const index = first.at(-1)!.description;
    for (const id of trusted.filter((t) => !CORE_TOOLS.includes(t))) expect(index).toContain(`\n${indexLine(id)}`);
    expect(index).not.toContain('shell.exec:');

    const later = offeredSpecs(trusted, ['mission.list', 'mission.create', 'shell.spawn']);
    expect(later.map((s) => s.id)).toEqual([...core, TOOLS_LOAD, 'mission.create', 'mission.list']);
    // What came before stays byte for byte (the cached prefix), whatever is loaded after it.
    expect(JSON.stringify(later.slice(0, first.length))).toBe(JSON.stringify(first));
  });

  it('index lines are one short line each', () => {
    for (const t of TOOL_CATALOG) {
      const line = indexLine(t.id);
      expect(line.startsWith(`${t.id}: `)).toBe(true);
      expect(line.length).toBeLessThanOrEqual(t.id.length + 2 + 90);
      expect(line).not.toContain('\n');
    }
  });
});

describe('tools.load', () => {
  it('loads granted tools, by id or by wire name, and keeps the set sorted', () => {
    const result = loadTools({ tools: ['mission__list', 'audit.read'] }, trusted, ['mission.create']);
    expect(result).toEqual({
      ok: true,
      loaded: ['audit.read', 'mission.create', 'mission.list'],
      requested: ['mission.list', 'audit.read'],
    });
    // A core tool is offered in full already: no error, nothing added.
    expect(loadTools({ tools: ['fs.read'] }, trusted, [])).toEqual({ ok: true, loaded: [], requested: ['fs.read'] });
  });

  it('attack: a SemiTrusted turn asking to load shell.exec loads nothing and is told why', () => {
    expect(semi).not.toContain('shell.exec');
    expect(semi.some((id) => !CORE_TOOLS.includes(id))).toBe(true);
    const result = loadTools({ tools: [semi.find((id) => !CORE_TOOLS.includes(id))!, 'shell.exec'] }, semi, []);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('CapabilityDenied');
    expect(result.error.message).toContain('"shell.exec" is not a tool this conversation may use; nothing was loaded');
    expect(result.error.hint).not.toContain('shell.exec');
    // Nor can it name a tool outside the catalog, or tools.load itself.
    expect(loadTools({ tools: ['nope.tool'] }, semi, []).ok).toBe(false);
    expect(loadTools({ tools: [TOOLS_LOAD] }, semi, []).ok).toBe(false);
  });

  it('refuses malformed input in words', () => {
    for (const input of [{}, { tools: [] }, { tools: 'mission.create' }, { tools: ['x'], more: 1 }, { tools: ['Bad Name'] }]) {
      const result = loadTools(input, trusted, []);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toMatch(/^tools\.load: /);
    }
  });

  it('what a session passes on is read defensively: anything malformed counts as nothing loaded', () => {
    expect(carriedTools(undefined)).toEqual([]);
    expect(carriedTools({ loadedTools: ['mission.create'] })).toEqual(['mission.create']);
    expect(carriedTools({ loadedTools: 'mission.create' })).toEqual([]);
    expect(carriedTools({ loadedTools: ['x'], admin: true })).toEqual([]);
    expect(carriedTools({ loadedTools: Array.from({ length: 500 }, (_, i) => `t${i}`) })).toEqual([]);
    // Carried names the turn is not granted are never offered.
    expect(toolOffer(semi, ['shell.exec', 'mission.list']).loaded).toEqual(semi.includes('mission.list') ? ['mission.list'] : []);
  });
});

describe('on the wire', () => {
  beforeAll(loadTokenizer);
  const receivedAt = Date.UTC(2026, 11, 5, 8, 0);
  const request = (loaded: string[]): LlmStepRequest => ({
    turnId: 't',
    step: 0,
    history: [],
    message: { id: 'm', sessionId: 's', receivedAt, content: textContent('What is the capital of France?') },
    transcript: [],
    tools: offeredSpecs(trusted, loaded).map(wireSpec),
    system: SYSTEM_PROMPT,
    context: turnContext(receivedAt, 'Europe/Berlin'),
  });

  it("the first turn of a Trusted CLI session with the default tools is at most 2,000 input tokens (the bench's Anthropic count)", () => {
    const counted = anthropicCounter()(anthropicRequestBody(request([]), 'claude-sonnet-4-5', 1024));
    expect(counted.input).toBeLessThanOrEqual(2000);
  });

  it('Anthropic: tools.load ends the stable tools with a breakpoint; at most four in all', () => {
    for (const loaded of [[], ['mission.create', 'value.read']]) {
      const body = anthropicRequestBody(request(loaded), 'claude-sonnet-4-5', 1024);
      const tools = body.tools as Array<{ name: string; cache_control?: unknown }>;
      expect(tools.filter((t) => t.cache_control).map((t) => t.name)).toEqual(['tools__load']);
      expect(JSON.stringify(body).match(/cache_control/g)?.length).toBeLessThanOrEqual(4);
    }
  });

  it('Anthropic: after a load, the next request still reads the core tools and the index from the cache', () => {
    const count = anthropicCounter();
    count(anthropicRequestBody(request([]), 'claude-sonnet-4-5', 1024));
    const afterLoad = count(anthropicRequestBody(request(['mission.create']), 'claude-sonnet-4-5', 1024));
    expect(afterLoad.cached).toBeGreaterThanOrEqual(1024);
  });
});
