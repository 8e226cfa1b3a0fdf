/**
 * The `unit` project (test/unit-tests.ts) holds what it says: no file in it reaches for a server-backed
 * helper, a database, the CLI or the shared Temporal server, and none leaves global state behind for
 * the next file (the project shares one module cache per worker). Anything else belongs to integration.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UNIT_TESTS } from '../unit-tests.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Helpers in test/support/ that start or reach a server, a database or a process of the CLI. */
const SERVER_BACKED = [
  'temporal',
  'postgres',
  'scratch-postgres',
  'turn-harness',
  'mission-harness',
  'mail-harness',
  'mail-servers',
  'processes',
  'cli-process',
  'worker-child',
  'worker-process',
  'repo-copy',
  'audit-bulk',
  'ui-chromium',
].map((name) => `test/support/${name}.ts`);

/** What a unit file may not do, and why. */
const REFUSED: [RegExp, string][] = [
  [/from '(pg|@electric-sql\/pglite|@temporalio\/testing)'/, 'opens a database or a Temporal test server'],
  [/import \{[^}]*\b(Client|Connection|NativeConnection|Worker)\b[^}]*\} from '@temporalio\/(client|worker)'/, 'connects to Temporal'],
  [/\bopenDatabase\(/, 'opens a database'],
  [/\binject\(/, 'reads the global setup'],
  [/\bvi\.(mock|stubGlobal|stubEnv)\(|process\.chdir\(|process\.env(\.\w+|\[[^\]]+\]) =[^=]/, 'changes global state'],
];

/** The files a pattern of UNIT_TESTS names: a path, or `<dir>/**\/*.test.ts`. */
function expand(pattern: string): string[] {
  if (!pattern.endsWith('/**/*.test.ts')) return [pattern];
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir)).flatMap((f) => (statSync(join(root, dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
  return walk(pattern.slice(0, -'/**/*.test.ts'.length)).filter((f) => f.endsWith('.test.ts'));
}

/** `file` and every test/support module it imports, transitively (relative imports only). */
function withSupport(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const m of readFileSync(join(root, file), 'utf8').matchAll(/from '(\.[^']+)\.js'/g)) {
    const target = relative(root, resolve(root, dirname(file), `${m[1]}.ts`));
    if (target.startsWith('test/support/')) withSupport(target, seen);
  }
  return seen;
}

const files = UNIT_TESTS.flatMap(expand);

describe('the unit project', () => {
  it('names only files that exist', () => {
    expect(files.filter((f) => !existsSync(join(root, f)))).toEqual([]);
    expect(files.length).toBeGreaterThan(40);
  });

  it.each(files)('%s needs no server, no database, no CLI and leaves no global state', (file) => {
    const reached = withSupport(file);
    expect(
      [...reached].filter((f) => SERVER_BACKED.includes(f)),
      'server-backed helpers',
    ).toEqual([]);
    for (const f of reached) {
      const text = readFileSync(join(root, f), 'utf8');
      for (const [pattern, why] of REFUSED) expect(pattern.exec(text)?.[0], `${f} ${why}`).toBeUndefined();
    }
  });

  it('the checks can fail: an integration file trips them', () => {
    const reached = withSupport('test/integration/turn-loop.test.ts');
    expect([...reached].some((f) => SERVER_BACKED.includes(f))).toBe(true);
    const worker = readFileSync(join(root, 'test/integration/worker-crash.test.ts'), 'utf8');
    expect(REFUSED.some(([pattern]) => pattern.test(worker))).toBe(true);
  });
});
