/** Short ids like git's: the start of an id names it when no other id starts so; several is an error listing them. */
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { resolvePrefix, shortestUniquePrefix } from '../../core/short-id.js';

const ids = [
  'mission-8926a5ed-0000-4000-8000-000000000001',
  'mission-8927bb00-0000-4000-8000-000000000002',
  'mission-confirm-3f0c2a9b1e7d4c55aa00112233445566',
];

describe('resolvePrefix', () => {
  it('finds the one id a start names, with or without the common prefix', () => {
    expect(resolvePrefix('8926', ids, 'mission', ['mission-'])).toBe(ids[0]);
    expect(resolvePrefix('mission-8927', ids, 'mission', ['mission-'])).toBe(ids[1]);
    expect(resolvePrefix('confirm-3f', ids, 'mission', ['mission-'])).toBe(ids[2]);
    expect(resolvePrefix(ids[1]!, ids, 'mission', ['mission-'])).toBe(ids[1]);
  });
  it('an exact id wins over a longer one it starts', () => {
    expect(resolvePrefix('abc', ['abc', 'abcd'], 'entry')).toBe('abc');
  });
  it('undefined when nothing matches (the server then says what is missing)', () => {
    expect(resolvePrefix('ffff', ids, 'mission', ['mission-'])).toBeUndefined();
    expect(resolvePrefix('', ids, 'mission')).toBeUndefined();
  });
  it('an ambiguous start is a Config error listing every candidate', () => {
    let err: unknown;
    try {
      resolvePrefix('892', ids, 'mission', ['mission-']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AivyxError);
    expect((err as AivyxError).kind).toBe('Config');
    expect((err as AivyxError).message).toBe(`"892" matches 2 mission ids:\n  ${ids[0]}\n  ${ids[1]}`);
    expect((err as AivyxError).hint).toBe('give more of the mission id');
  });
  it('lists at most eight candidates', () => {
    const many = Array.from({ length: 12 }, (_, i) => `m_${String(i).padStart(2, '0')}`);
    expect(() => resolvePrefix('m_', many, 'memory entry')).toThrow(/matches 12 memory entry ids:\n( {2}m_\d\d\n){8} {2}…$/);
  });
});

describe('shortestUniquePrefix', () => {
  it('is at least 8 characters after the prefix, longer only where another id shares them', () => {
    expect(shortestUniquePrefix(ids[0]!, ids, 'mission-')).toBe('8926a5ed');
    expect(shortestUniquePrefix('mission-aaaaaaaa1', ['mission-aaaaaaaa1', 'mission-aaaaaaaa2'], 'mission-')).toBe('aaaaaaaa1');
    // Whatever it gives, resolvePrefix finds the same id again.
    for (const id of ids) expect(resolvePrefix(shortestUniquePrefix(id, ids, 'mission-'), ids, 'mission', ['mission-'])).toBe(id);
  });
});
