/**
 * `engines` tells the truth (issue #32 item 8): every package the lockfile installs accepts the Node
 * version package.json names as the least, so `npm install` on that Node prints no EBADENGINE, and the
 * README says the same version. (email-reply-parser 2.3.9 declared Node >= 22 while we said >= 20.3.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../app/project-root.js';

type Version = [number, number, number];
const root = projectRoot();
const json = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, unknown>;

function version(v: string): Version {
  const [a = 0, b = 0, c = 0] = v.replace(/^v/, '').split('.').map(Number);
  return [a, b, c];
}
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `v` satisfies one comparator of an engines range (the forms npm packages use here). */
function satisfiesOne(v: Version, c: string): boolean {
  const m = /^(>=|>|<=|<|\^|~|=)?\s*v?(\d+(?:\.\d+){0,2})(?:\.[x*])?$/.exec(c.trim());
  if (!m) throw new Error(`engines comparator "${c}" is a form this test does not read`);
  const parts = m[2]!.split('.').length;
  const w = version(m[2]!);
  switch (m[1]) {
    case '>=':
      return compare(v, w) >= 0;
    case '>':
      return compare(v, w) > 0;
    case '<':
      return compare(v, w) < 0;
    case '<=':
      return compare(v, w) <= 0;
    case '^':
      return v[0] === w[0] && compare(v, w) >= 0;
    case '~':
      return v[0] === w[0] && v[1] === w[1] && compare(v, w) >= 0;
    default:
      return parts === 1 ? v[0] === w[0] : parts === 2 ? v[0] === w[0] && v[1] === w[1] : compare(v, w) === 0;
  }
}

/** `range` (`a || b`, each a space-separated conjunction; `>= 20` written with a space) satisfied by `v`. */
function satisfies(v: Version, range: string): boolean {
  return range.split('||').some((alt) =>
    (
      alt
        .replace(/(>=|<=|>|<|=)\s+/g, '$1')
        .trim()
        .match(/\S+/g) ?? ['*']
    ).every((c) => c === '*' || satisfiesOne(v, c)),
  );
}

describe('engines', () => {
  const declared = (json('package.json').engines as { node: string }).node;
  const least = version(/^>=\s*([\d.]+)$/.exec(declared)?.[1] ?? '0');

  it('the least Node version we name satisfies every installed package’s engines', () => {
    const packages = json('package-lock.json').packages as Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
    const refusing = Object.entries(packages)
      .filter(([path, p]) => path !== '' && !p.optional && !Array.isArray(p.engines) && p.engines?.node)
      .filter(([, p]) => !satisfies(least, (p.engines as { node: string }).node))
      .map(([path, p]) => `${path.replace(/^node_modules\//, '')} wants node ${(p.engines as { node: string }).node}`);
    expect(refusing, `package.json says node ${declared}`).toEqual([]);
  });

  it('the range reader itself: what would have warned does not pass', () => {
    expect(satisfies(version('20.19.0'), '>= 22.0.0')).toBe(false);
    expect(satisfies(version('20.3.0'), '>= 20.19.0')).toBe(false);
    expect(satisfies(version('20.19.0'), '^18.18.0 || ^20.9.0 || >=21.1.0')).toBe(true);
    expect(satisfies(version('20.19.0'), '18 || 20 || >=22')).toBe(true);
  });

  it('the README names the same least version, and this Node meets it', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`(Node ≥ ${declared.replace(/^>=\s*/, '')},`);
    expect(satisfies(version(process.versions.node), declared)).toBe(true);
  });
});
