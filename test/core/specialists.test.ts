/**
 * Specialists (issue 33): the owner's configuration is validated at start, and a specialist's child
 * never holds a scope its lead lacks or its own set lacks — a property over random capability sets,
 * through the same functions the worker uses (the delegation's limit, then the child's openTurn).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapabilitySet, Scope, TRUST_TIERS, tierCeiling } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import {
  defaultSpecialists,
  delegateChildId,
  delegatedCapabilities,
  parseDelegateChildId,
  parseSpecialists,
  specialistsDescription,
  tighterBudget,
} from '../../core/specialists.js';
import { agentDelegateTool } from '../../core/tools/agent-delegate.js';

const configError = (raw: unknown): string => {
  try {
    parseSpecialists(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(AivyxError);
    expect((e as AivyxError).kind).toBe('Config');
    return (e as AivyxError).message;
  }
  throw new Error('parsed');
};

describe('specialists in configuration', () => {
  it('parses a list (JSON text or value), canonicalizes scopes and defaults parallel to true', () => {
    const [s] = parseSpecialists(
      '[{"name":"summarizer","instructions":"Summarize.","capabilities":["memory.read","fs.read:/srv/docs/**"],"budget":{"tokens":500}}]',
    );
    expect(s).toEqual({
      name: 'summarizer',
      instructions: 'Summarize.',
      capabilities: ['fs.read:/srv/docs/**', 'memory.read'],
      budget: { tokens: 500 },
      parallel: true,
    });
  });

  it('refuses bad definitions naming the field', () => {
    expect(configError('not json')).toContain('JSON array');
    expect(configError([{ name: 'Bad Name', instructions: 'x', capabilities: ['llm.call'] }])).toContain('0.name');
    expect(configError([{ name: 'a', instructions: 'x', capabilities: ['fs.raed'] }])).toContain('not a valid scope');
    expect(configError([{ name: 'a', instructions: 'x', capabilities: ['agent.spawn'] }])).toContain('not a valid scope');
    expect(configError([{ name: 'a', instructions: 'x', capabilities: [] }])).toContain('capabilities');
    expect(configError([{ name: 'a', instructions: 'x', capabilities: ['llm.call'], tools: [] }])).toContain('tools');
    const twice = { name: 'a', instructions: 'x', capabilities: ['llm.call'] };
    expect(configError([twice, twice])).toContain('defined twice');
  });

  it('ships a researcher (web and memory reads) and a writer confined to the notes folder', () => {
    const [researcher, writer] = defaultSpecialists('/home/u/.aivyx/workspace/notes');
    const r = CapabilitySet.from(researcher!.capabilities);
    expect(r.grants('net.fetch:https://example.org/a')).toBe(true);
    expect(r.grants('memory.read:anything')).toBe(true);
    expect(r.grants('net.post:https://example.org/a')).toBe(false);
    expect(r.grants('fs.write:/home/u/x')).toBe(false);
    const w = CapabilitySet.from(writer!.capabilities);
    expect(w.grants('fs.write:/home/u/.aivyx/workspace/notes/a.md')).toBe(true);
    expect(w.grants('fs.write:/home/u/.aivyx/workspace/other.md')).toBe(false);
    expect(w.grants('net.fetch:https://example.org/')).toBe(false);
  });

  it('agent.delegate needs agent.delegate:<specialist>; a child id derives from the lead and its call', () => {
    expect(agentDelegateTool.requiredScope({ specialist: 'researcher', task: 'read x' })).toBe('agent.delegate:researcher');
    expect(CapabilitySet.from(['agent.delegate:researcher']).grants('agent.delegate:writer')).toBe(false);
    expect(CapabilitySet.from(['agent.delegate']).grants('agent.delegate:writer')).toBe(true);
    expect(() => agentDelegateTool.parse({ specialist: '../x', task: 't' })).toThrow(/specialist/);
    expect(delegateChildId('turn/cli/m1', 'tool-0-2', 'writer')).toBe('turn/cli/m1/tool-0-2/writer');
  });

  it('a child turn id reads back as its lead and specialist; any other id (a lead, a session, a bad name) as none', () => {
    expect(parseDelegateChildId('turn/cli/m1/tool-0-2/writer')).toEqual({ leadTurnId: 'turn/cli/m1', specialist: 'writer' });
    expect(parseDelegateChildId('turn/cli/m1/tool-0-2/writer/tool-1-0/researcher')).toEqual({
      leadTurnId: 'turn/cli/m1/tool-0-2/writer',
      specialist: 'researcher',
    });
    for (const id of ['turn/cli/m1', 'session/cli/s1', 'turn/cli/m1/tool-x-2/writer', 'turn/cli/m1/tool-0-2/Writer', '/tool-0-2/writer'])
      expect(parseDelegateChildId(id), id).toBeUndefined();
  });

  it("agent.delegate's description names the configured specialists, by the first sentence of their instructions", () => {
    const text = specialistsDescription('Ask one specialist.', defaultSpecialists('/n'));
    expect(text).toBe(
      'Ask one specialist.\nSpecialists:\n- researcher: You research one question: read the pages and memories you need, then answer in a short paragraph with the sources you used.\n- writer: You write what you are asked to as files under /n; answer with the paths you wrote.',
    );
    expect(specialistsDescription('Ask.', [])).toBe('Ask.\nNo specialist is configured.');
  });

  it('the tighter budget is taken field by field', () => {
    expect(tighterBudget({ tokens: 100 }, { tokens: 50, costUsd: 1 })).toEqual({ tokens: 50, costUsd: 1 });
    expect(tighterBudget(undefined, { costUsd: 2 })).toEqual({ costUsd: 2 });
    expect(tighterBudget(undefined, undefined)).toBeUndefined();
  });
});

// Small universes so random scopes often relate (shared prefixes, globs) and the property is not vacuous.
const pathQ = fc.array(fc.constantFrom('a', 'b', 'notes', '*', '**', 'x.md'), { maxLength: 3 }).map((s) => '/' + s.join('/'));
const urlQ = fc.constantFrom('https://a.com/', 'https://a.com/x', 'https://b.a.com/', '*');
const globQ = fc.array(fc.constantFrom('a', 'b', '*', 'researcher', 'writer'), { minLength: 1, maxLength: 3 }).map((s) => s.join(''));
const qualified = (base: string, q: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(base) }, { weight: 4, arbitrary: q.map((x) => `${base}:${x}`) });
const anyScope = fc.oneof(
  qualified('fs.read', pathQ),
  qualified('fs.write', pathQ),
  qualified('net.fetch', urlQ),
  qualified('net.post', urlQ),
  qualified('memory.read', globQ),
  qualified('agent.delegate', globQ),
  fc.constant('llm.call'),
);
const anySet = fc.array(anyScope, { maxLength: 8 }).map((xs) => CapabilitySet.from(xs));

describe('attenuation (property)', () => {
  it('a child never holds a scope its lead lacks or its specialist lacks, at any tier', () => {
    let granted = 0;
    fc.assert(
      fc.property(
        anySet,
        anySet,
        fc.constantFrom(...TRUST_TIERS.filter((t) => t !== 'Kernel')),
        fc.array(anyScope, { maxLength: 8 }),
        (agent, specialist, tier, probes) => {
          const ceiling = agent.intersect(tierCeiling(tier));
          // The lead's effective set as openTurn computes it, the child's limit as the delegate tool
          // attests it, and the child's effective set as its own openTurn computes it.
          const lead = ceiling;
          const limit = delegatedCapabilities(lead, specialist);
          const child = ceiling.intersect(limit);
          for (const raw of [...probes, ...agent.toJSON(), ...specialist.toJSON()]) {
            const s = Scope.parse(raw);
            if (!child.grants(s)) continue;
            granted++;
            expect(lead.grants(s)).toBe(true);
            expect(specialist.grants(s)).toBe(true);
          }
          // What the worker checks at the child's openTurn holds for every honest delegation.
          expect(limit.isSubsetOf(lead)).toBe(true);
          expect(limit.isSubsetOf(specialist)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
    // The property was exercised, not vacuously true.
    expect(granted).toBeGreaterThan(100);
  });
});
