/**
 * For the CONTRIBUTING walkthrough tests: a copy of this repository with exactly a walkthrough's edits
 * applied (its new files from a fixture, its registry lines above a marker), and a vitest run inside it
 * against the shared Temporal server.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** One "Adding a …" section of docs/CONTRIBUTING.md: its file table, the counts it states ("In all: N new files, M edited"), its registry code blocks. */
export interface Walkthrough {
  files: { path: string; isNew: boolean }[];
  counts: { created: number; edited: number } | undefined;
  registry: Map<string, string[]>;
}

export function walkthrough(heading: string): Walkthrough {
  const doc = readFileSync(join(REPO, 'docs/CONTRIBUTING.md'), 'utf8');
  const start = doc.indexOf(`## ${heading}\n`);
  if (start < 0) throw new Error(`docs/CONTRIBUTING.md has no "## ${heading}"`);
  const rest = doc.slice(start + heading.length + 4);
  const section = rest.slice(0, rest.indexOf('\n## ') < 0 ? undefined : rest.indexOf('\n## '));
  const files = [...section.matchAll(/^\| `([^`]+)` \| (new:)?/gm)].map((m) => ({ path: m[1]!, isNew: m[2] !== undefined }));
  const registry = new Map(
    [...section.matchAll(/```ts registry (\S+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!.split('\n').filter((l) => l.trim() !== '')]),
  );
  const stated = /In all: (\d+) new files, (\d+) edited\./.exec(section);
  return { files, counts: stated ? { created: Number(stated[1]), edited: Number(stated[2]) } : undefined, registry };
}

/** Every file under `dir`, relative to it. */
export function filesUnder(dir: string): string[] {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));
  return walk(dir).map((f) => relative(dir, f));
}

/** `source` with registry lines in place: imports after the last import, the rest above the line holding `marker`. */
export function withRegistryLines(source: string, lines: readonly string[], marker: string): string {
  const out = source.split('\n');
  const lastImport = out.reduce((at, l, i) => (l.startsWith('import ') ? i : at), -1);
  out.splice(lastImport + 1, 0, ...lines.filter((l) => l.startsWith('import ')));
  const at = out.findIndex((l) => l.includes(marker));
  if (at < 0) throw new Error(`no "${marker}" line`);
  out.splice(at, 0, ...lines.filter((l) => !l.startsWith('import ')));
  return out.join('\n');
}

/** A copy of the repository (tracked and untracked files, no fixtures of `skipFixture`) with node_modules and .venv linked. */
export function copyRepository(skipFixture: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'aivyx-walkthrough-'));
  const files = spawnSync('git', ['ls-files', '-c', '-o', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
    .stdout.split('\n')
    .filter((f) => f && existsSync(join(REPO, f)) && !f.startsWith(skipFixture) && f !== 'node_modules' && f !== '.venv');
  for (const f of files) {
    mkdirSync(dirname(join(copy, f)), { recursive: true });
    cpSync(join(REPO, f), join(copy, f));
  }
  for (const link of ['node_modules', '.venv']) symlinkSync(join(REPO, link), join(copy, link));
  return copy;
}

/** Applies `w` to `copy`: its new files from `fixture`, its registry lines; returns the lines each registry file grew by. */
export function applyWalkthrough(copy: string, fixture: string, w: Walkthrough, marker: string): Map<string, number> {
  for (const f of w.files.filter((x) => x.isNew)) {
    mkdirSync(dirname(join(copy, f.path)), { recursive: true });
    cpSync(join(fixture, f.path), join(copy, f.path));
  }
  const grew = new Map<string, number>();
  for (const [path, lines] of w.registry) {
    const before = readFileSync(join(copy, path), 'utf8');
    const after = withRegistryLines(before, lines, marker);
    grew.set(path, after.split('\n').length - before.split('\n').length);
    writeFileSync(join(copy, path), after);
  }
  return grew;
}

/** Runs one test file inside `copy` on the shared Temporal server. */
export function runTestIn(copy: string, testFile: string, temporalAddress: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', testFile], {
    cwd: copy,
    encoding: 'utf8',
    env: { ...process.env, AIVYX_TEST_TEMPORAL_ADDRESS: temporalAddress },
    timeout: 300_000,
  });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

/** What a CONTRIBUTING walkthrough test checks (test/contributing/*). */
export interface WalkthroughSpec {
  /** The `## …` heading in docs/CONTRIBUTING.md. */
  heading: string;
  /** The example's files, at the paths the walkthrough names (under test/fixtures/). */
  fixture: string;
  /** The comment line registry entries go above. */
  marker: string;
  /** The new files the walkthrough's table must name, in order. */
  newFiles: string[];
  /** The registry files it edits, in order, with the import and entry lines each gets (default one of each). */
  registryFiles: (string | { path: string; imports: number; entries: number })[];
  /** The example's own test inside the copy, and the line it prints when everything it checks held. */
  test: string;
  passed: string;
  /** What the run shows, for the test's name. */
  shows: string;
}

/** The three walkthrough tests: the table matches the fixture; the walkthrough works in a copy; without its registry lines it does not. */
export function describeWalkthrough(spec: WalkthroughSpec, temporalAddress: () => string): void {
  const fixture = join(REPO, spec.fixture);
  const w = walkthrough(spec.heading);
  let copy: string | undefined;
  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  const registry = spec.registryFiles.map((r) => (typeof r === 'string' ? { path: r, imports: 1, entries: 1 } : r));
  it(`names ${spec.newFiles.length} new files and ${registry.length} edited ones, with their counts, and the lines each registry file gets — and the fixture holds exactly the new files`, () => {
    expect(w.files.filter((f) => f.isNew).map((f) => f.path)).toEqual(spec.newFiles);
    expect(w.files.filter((f) => !f.isNew).map((f) => f.path)).toEqual(registry.map((r) => r.path));
    expect(w.counts).toEqual({ created: spec.newFiles.length, edited: registry.length });
    expect([...w.registry.keys()]).toEqual(registry.map((r) => r.path));
    for (const r of registry) {
      const lines = w.registry.get(r.path)!;
      expect(
        lines.filter((l) => l.startsWith('import ')),
        r.path,
      ).toHaveLength(r.imports);
      expect(
        lines.filter((l) => !l.startsWith('import ')),
        r.path,
      ).toHaveLength(r.entries);
    }
    expect(filesUnder(fixture).sort()).toEqual([...spec.newFiles].sort());
  });

  it(`the walkthrough applied to a copy of the repository: ${spec.shows}`, () => {
    copy = copyRepository(`${spec.fixture}/`);
    const grew = applyWalkthrough(copy, fixture, w, spec.marker);
    for (const [path, lines] of w.registry) expect(grew.get(path), path).toBe(lines.length);
    const run = runTestIn(copy, spec.test, temporalAddress());
    expect(run.status, run.output.slice(-4000)).toBe(0);
    expect(run.output).toContain(spec.passed);
  }, 320_000);

  it('without its registry entry lines the same run fails (the check can fail)', () => {
    if (!copy) return;
    for (const [path, lines] of w.registry) {
      const entries = lines.filter((l) => !l.startsWith('import '));
      const file = join(copy, path);
      writeFileSync(
        file,
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => !entries.includes(l))
          .join('\n'),
      );
    }
    const run = runTestIn(copy, spec.test, temporalAddress());
    expect(run.status).not.toBe(0);
    expect(run.output).not.toContain(spec.passed);
  }, 320_000);
}
