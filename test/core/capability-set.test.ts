import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { CapabilitySet, Scope } from '../../core/capability/index.js';

describe('CapabilitySet', () => {
  it('empty grants nothing', () => {
    expect(CapabilitySet.empty().size).toBe(0);
    expect(CapabilitySet.empty().grants('llm.call')).toBe(false);
    expect(CapabilitySet.empty().toJSON()).toEqual([]);
  });

  it('parses, canonicalizes, deduplicates and sorts', () => {
    const set = CapabilitySet.from(['llm.call', 'fs.read:/a//b', Scope.parse('fs.read:/a/b'), 'audit.read', 'llm.call']);
    expect(set.toJSON()).toEqual(['audit.read', 'fs.read:/a/b', 'llm.call']);
    expect(set.size).toBe(3);
    expect(set.scopes.map((s) => s.toString())).toEqual(set.toJSON());
  });

  it('throws InvalidScope for a bad scope string', () => {
    expect(() => CapabilitySet.from(['fs.raed'])).toThrow(AivyxError);
    expect(() => CapabilitySet.from(['llm.call', 'schedule.run'])).toThrow(expect.objectContaining({ kind: 'InvalidScope' }));
  });

  it('round-trips through JSON and refuses non-arrays', () => {
    const set = CapabilitySet.from(['net.fetch:https://x.com/a', 'shell.exec:ls,git']);
    expect(CapabilitySet.fromJSON(JSON.parse(JSON.stringify(set)) as string[]).toJSON()).toEqual(set.toJSON());
    expect(() => CapabilitySet.fromJSON('llm.call' as unknown as string[])).toThrow(AivyxError);
    expect(() => CapabilitySet.fromJSON([1] as unknown as string[])).toThrow(AivyxError);
  });

  it('grants when any held scope grants', () => {
    const set = CapabilitySet.from(['fs.read:/home/u/**', 'fs.read:/etc/hosts', 'llm.call']);
    expect(set.grants('fs.read:/home/u/x')).toBe(true);
    expect(set.grants('fs.read:/etc/hosts')).toBe(true);
    expect(set.grants('fs.read:/etc/passwd')).toBe(false);
    expect(set.grants('fs.read')).toBe(false);
    expect(set.grants(Scope.parse('llm.call:gpt-4'))).toBe(true);
    expect(() => set.grants('fs.raed')).toThrow(AivyxError);
  });

  it('is immutable', () => {
    const set = CapabilitySet.from(['llm.call']);
    expect(() => (set.scopes as Scope[]).push(Scope.parse('fs.read'))).toThrow();
    expect(set.size).toBe(1);
  });

  it('isSubsetOf compares by grant, not by string', () => {
    expect(CapabilitySet.from(['fs.read:/a/b']).isSubsetOf(CapabilitySet.from(['fs.read:/a/**']))).toBe(true);
    expect(CapabilitySet.from(['fs.read']).isSubsetOf(CapabilitySet.from(['fs.read:/**']))).toBe(false);
  });
});

describe('CapabilitySet.intersect', () => {
  const i = (a: string[], b: string[]): string[] => CapabilitySet.from(a).intersect(CapabilitySet.from(b)).toJSON();

  it('keeps the narrower of two related scopes, in either order', () => {
    expect(i(['fs.read'], ['fs.read:/home/**'])).toEqual(['fs.read:/home/**']);
    expect(i(['fs.read:/home/**'], ['fs.read'])).toEqual(['fs.read:/home/**']);
    expect(i(['fs.read:/home/u/**'], ['fs.read:/home/**'])).toEqual(['fs.read:/home/u/**']);
    expect(i(['shell.exec:ls'], ['shell.exec:git,ls'])).toEqual(['shell.exec:ls']);
  });

  it('drops unrelated pairs and different bases', () => {
    expect(i(['fs.read:/a/**'], ['fs.read:/b/**'])).toEqual([]);
    expect(i(['fs.read'], ['fs.write'])).toEqual([]);
    expect(i(['shell.exec:ls,rm'], ['shell.exec:git,ls'])).toEqual([]);
  });

  it('keeps every narrower scope when several pairs relate', () => {
    expect(i(['fs.read:/a/x', 'fs.read:/b/y', 'llm.call'], ['fs.read:/a/**', 'fs.read:/b/**', 'llm.call:gpt-*'])).toEqual([
      'fs.read:/a/x',
      'fs.read:/b/y',
      'llm.call:gpt-*',
    ]);
  });

  it('with a ▲ ceiling, a bare agent grant becomes qualified-only', () => {
    const eff = CapabilitySet.from(['net.post']).intersect(CapabilitySet.from(['net.post:*']));
    expect(eff.toJSON()).toEqual(['net.post:*']);
    expect(eff.grants('net.post:https://x.com/a')).toBe(true);
    expect(eff.grants('net.post')).toBe(false);
  });

  it('is empty against the empty set', () => {
    expect(i(['fs.read', 'llm.call'], [])).toEqual([]);
  });
});
