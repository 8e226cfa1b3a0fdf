/**
 * docs/CONTRIBUTING.md "Adding a tool" is true: applied to a copy of this repository — the files its
 * table names, the registry lines it shows and nothing else — the example tool runs through a real
 * worker (the copy's own test, test/fixtures/add-a-tool/test/activities/fs-count.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixture = join(repo, 'test/fixtures/add-a-tool');
const MARKER = '// New tools go above this line';

/** The "Adding a tool" section of the walkthrough. */
function walkthrough(): { files: { path: string; isNew: boolean }[]; registry: Map<string, string[]> } {
  const doc = readFileSync(join(repo, 'docs/CONTRIBUTING.md'), 'utf8');
  const section = /## Adding a tool\n([\s\S]*?)(\n## |$)/.exec(doc)?.[1] ?? '';
  const files = [...section.matchAll(/^\| `([^`]+)` \| (new:)?/gm)].map((m) => ({ path: m[1]!, isNew: m[2] !== undefined }));
  const registry = new Map([...section.matchAll(/```ts registry (\S+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!.split('\n').filter((l) => l.trim() !== '')]));
  return { files, registry };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

/** `source` with the registry lines in place: imports after the last import, the rest above the marker. */
function withRegistryLines(source: string, lines: string[]): string {
  const out = source.split('\n');
  const lastImport = out.reduce((at, l, i) => (l.startsWith('import ') ? i : at), -1);
  const imports = lines.filter((l) => l.startsWith('import '));
  out.splice(lastImport + 1, 0, ...imports);
  const marker = out.findIndex((l) => l.includes(MARKER));
  if (marker < 0) throw new Error(`no "${MARKER}" line`);
  out.splice(marker, 0, ...lines.filter((l) => !l.startsWith('import ')));
  return out.join('\n');
}

const copies: string[] = [];
afterAll(() => {
  for (const c of copies) rmSync(c, { recursive: true, force: true });
});

describe('adding a tool (docs/CONTRIBUTING.md)', () => {
  const { files, registry } = walkthrough();

  it('names two new source files, a test, and two one-line registry edits — and the fixture holds exactly the new files', () => {
    expect(files.filter((f) => f.isNew).map((f) => f.path)).toEqual(['core/tools/fs-count.ts', 'activities/tools/fs-count.ts', 'test/activities/fs-count.test.ts']);
    expect(files.filter((f) => !f.isNew).map((f) => f.path)).toEqual([...registry.keys()]);
    for (const [, lines] of registry) {
      expect(lines.filter((l) => l.startsWith('import '))).toHaveLength(1);
      expect(lines.filter((l) => !l.startsWith('import '))).toHaveLength(1);
    }
    expect(filesUnder(fixture).map((f) => relative(fixture, f)).sort()).toEqual(files.filter((f) => f.isNew).map((f) => f.path).sort());
  });

  it('the walkthrough applied to a copy of the repository: fs.count runs through a real worker, denied outside its grant', () => {
    const copy = mkdtempSync(join(tmpdir(), 'aivyx-add-a-tool-'));
    copies.push(copy);
    const tracked = spawnSync('git', ['ls-files', '-c', '-o', '--exclude-standard'], { cwd: repo, encoding: 'utf8' }).stdout.split('\n').filter((f) => f && existsSync(join(repo, f)) && !f.startsWith('test/fixtures/add-a-tool/') && f !== 'node_modules' && f !== '.venv');
    for (const f of tracked) {
      mkdirSync(dirname(join(copy, f)), { recursive: true });
      cpSync(join(repo, f), join(copy, f));
    }
    for (const link of ['node_modules', '.venv']) symlinkSync(join(repo, link), join(copy, link));
    // The walkthrough, and nothing else: the new files, then the registry lines.
    for (const f of files.filter((x) => x.isNew)) {
      mkdirSync(dirname(join(copy, f.path)), { recursive: true });
      cpSync(join(fixture, f.path), join(copy, f.path));
    }
    for (const [path, lines] of registry) {
      const before = readFileSync(join(copy, path), 'utf8');
      const after = withRegistryLines(before, lines);
      expect(after.split('\n').length - before.split('\n').length, path).toBe(lines.length);
      writeFileSync(join(copy, path), after);
    }
    const run = spawnSync(process.execPath, [join(repo, 'node_modules/vitest/vitest.mjs'), 'run', 'test/activities/fs-count.test.ts'], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, AIVYX_TEST_TEMPORAL_ADDRESS: inject('temporalAddress') },
      timeout: 300_000,
    });
    expect(run.status, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`).toBe(0);
    expect(run.stdout).toContain('FS_COUNT_SCENARIO_PASSED');
  }, 320_000);

  it('without the registry line the copy does not offer the tool (the check can fail)', () => {
    const copy = copies[0];
    if (!copy) return;
    const catalog = join(copy, 'core/tool-catalog.ts');
    writeFileSync(catalog, readFileSync(catalog, 'utf8').replace(/^ {2}fsCountTool,\n/m, ''));
    const run = spawnSync(process.execPath, [join(repo, 'node_modules/vitest/vitest.mjs'), 'run', 'test/activities/fs-count.test.ts'], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, AIVYX_TEST_TEMPORAL_ADDRESS: inject('temporalAddress') },
      timeout: 300_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stdout).not.toContain('FS_COUNT_SCENARIO_PASSED');
  }, 320_000);
});
