/** Memory tool scopes: the forms each input asks for, and what each trust tier's ceiling lets through. */
import { describe, expect, it } from 'vitest';
import { CapabilitySet, effectiveCapabilities, type TrustTier } from '../../core/capability/index.js';
import { findTool } from '../../core/tool-catalog.js';
import { memoryForgetTool } from '../../core/tools/memory-forget.js';
import { memoryRecallTool, parseMemoryRecallInput } from '../../core/tools/memory-recall.js';
import { memoryWriteTool } from '../../core/tools/memory-write.js';
import { errorKindOf } from '../support/aivyx-failure.js';

const agent = CapabilitySet.from(['memory.read', 'memory.write', 'memory.forget']);
const allowed = (tier: TrustTier, scope: string) => effectiveCapabilities(agent, tier).grants(scope);

describe('memory scope forms', () => {
  it('recall: bare without a filter; session, topic, both, or the public space when filtered', () => {
    const r = (input: unknown) => memoryRecallTool.requiredScope(input);
    expect(r({})).toBe('memory.read');
    expect(r({ query: 'work', from: 0, to: 10 })).toBe('memory.read');
    expect(r({ session: 's-1' })).toBe('memory.read:session:s-1');
    expect(r({ topic: 'Work' })).toBe('memory.read:topic:work');
    expect(r({ session: 's-1', topic: 'work' })).toBe('memory.read:session:s-1:topic:work');
    expect(r({ public: true })).toBe('memory.read:scope:public:*');
    expect(r({ public: true, topic: 'recipes', query: 'soup' })).toBe('memory.read:scope:public:recipes');
    expect(r({ public: false })).toBe('memory.read');
  });

  it('write and forget use the same forms; a public write needs a topic', () => {
    expect(memoryWriteTool.requiredScope({ text: 'x' })).toBe('memory.write');
    expect(memoryWriteTool.requiredScope({ text: 'x', session: 's' })).toBe('memory.write:session:s');
    expect(memoryWriteTool.requiredScope({ text: 'x', session: 's', topic: 't' })).toBe('memory.write:session:s:topic:t');
    expect(memoryWriteTool.requiredScope({ text: 'x', topic: 't', public: true })).toBe('memory.write:scope:public:t');
    expect(errorKindOf(() => memoryWriteTool.requiredScope({ text: 'x', public: true }))).toBe('InvalidScope');
    expect(memoryForgetTool.requiredScope({ id: `m_${'a'.repeat(32)}` })).toBe('memory.forget');
    expect(memoryForgetTool.requiredScope({ id: `m_${'a'.repeat(32)}`, topic: 't' })).toBe('memory.forget:topic:t');
    expect(memoryForgetTool.requiredScope({ session: 's', to: '2026-12-01' })).toBe('memory.forget:session:s');
  });

  it.each([
    ['a glob in a session', memoryRecallTool, { session: '*' }],
    ['a colon forging the combined form', memoryRecallTool, { session: 'a:topic:b' }],
    ['a space in a topic', memoryRecallTool, { topic: 'my work' }],
    ['public with a session', memoryRecallTool, { public: true, session: 's' }],
    ['a loose date', memoryRecallTool, { from: 'Dec 1' }],
    ['an empty range', memoryRecallTool, { from: 10, to: 10 }],
    ['limit too large', memoryRecallTool, { limit: 51 }],
    ['an unknown field', memoryRecallTool, { qeury: 'x' }],
    ['empty text', memoryWriteTool, { text: ' ' }],
    ['an empty forget', memoryForgetTool, {}],
    ['a malformed id', memoryForgetTool, { id: 'entry/1' }],
  ])('refuses %s with InvalidScope', (_label, tool, input) => {
    expect(errorKindOf(() => tool.requiredScope(input))).toBe('InvalidScope');
  });

  it('reads ISO-8601 and epoch ms ranges alike', () => {
    expect(parseMemoryRecallInput({ from: '2026-12-01T00:00:00Z', to: '2026-12-02' })).toMatchObject({
      from: Date.UTC(2026, 11, 1),
      to: Date.UTC(2026, 11, 2),
    });
    expect(parseMemoryRecallInput({ from: 5, to: 6 })).toMatchObject({ from: 5, to: 6, limit: 10 });
  });

  it('is in the catalog the workflow checks', () => {
    for (const id of ['memory.write', 'memory.recall', 'memory.forget']) expect(findTool(id)?.id).toBe(id);
  });
});

describe('memory scopes × trust tiers', () => {
  const recall = (input: unknown) => memoryRecallTool.requiredScope(input);

  it.each(['Trusted', 'SemiTrusted'] as const)('%s can recall with or without filters and write', (tier) => {
    for (const input of [{}, { session: 's-1' }, { topic: 'work' }, { session: 's', topic: 't' }, { public: true }])
      expect(allowed(tier, recall(input))).toBe(true);
    expect(allowed(tier, memoryWriteTool.requiredScope({ text: 'x' }))).toBe(true);
  });

  it('Untrusted may only recall the public space, and nothing else', () => {
    expect(allowed('Untrusted', recall({ public: true }))).toBe(true);
    expect(allowed('Untrusted', recall({ public: true, topic: 'recipes', query: 'soup' }))).toBe(true);
    for (const input of [{}, { query: 'x' }, { session: 's-1' }, { topic: 'work' }, { session: 's', topic: 't' }])
      expect(allowed('Untrusted', recall(input))).toBe(false);
    expect(allowed('Untrusted', memoryWriteTool.requiredScope({ text: 'x', topic: 't', public: true }))).toBe(false);
    expect(allowed('Untrusted', memoryForgetTool.requiredScope({ topic: 't' }))).toBe(false);
  });

  it('forget: Trusted bare; SemiTrusted only what the operator configured (▲), nothing by default', () => {
    const id = `m_${'b'.repeat(32)}`;
    expect(allowed('Trusted', memoryForgetTool.requiredScope({ id }))).toBe(true);
    expect(allowed('SemiTrusted', memoryForgetTool.requiredScope({ id }))).toBe(false);
    expect(allowed('SemiTrusted', memoryForgetTool.requiredScope({ id, session: 's' }))).toBe(false);
    const policy = { semiTrusted: { 'memory.forget': ['session:*'] } };
    const semi = (scope: string) => effectiveCapabilities(agent, 'SemiTrusted', policy).grants(scope);
    expect(semi(memoryForgetTool.requiredScope({ id, session: 's' }))).toBe(true);
    expect(semi(memoryForgetTool.requiredScope({ id, topic: 't' }))).toBe(false);
    expect(semi(memoryForgetTool.requiredScope({ id }))).toBe(false);
    expect(semi(memoryForgetTool.requiredScope({ to: 5 }))).toBe(false);
  });

  it('a session-glob grant (the seed scenario) covers session recalls but not the bare one', () => {
    const held = CapabilitySet.from(['memory.read:session:*']);
    expect(held.grants(recall({ session: 's-1' }))).toBe(true);
    expect(held.grants(recall({ session: 's-1', topic: 'work' }))).toBe(true);
    expect(held.grants(recall({}))).toBe(false);
    expect(held.grants(recall({ topic: 'work' }))).toBe(false);
    expect(held.grants(recall({ public: true }))).toBe(false);
  });
});
