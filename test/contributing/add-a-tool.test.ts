/**
 * docs/CONTRIBUTING.md "Adding a tool" is true: applied to a copy of this repository — the files its
 * table names, the registry lines it shows and nothing else — the example tool runs through a real
 * worker (the copy's own test, test/fixtures/add-a-tool/test/activities/fs-count.test.ts).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { applyWalkthrough, copyRepository, filesUnder, REPO, runTestIn, walkthrough } from '../support/repo-copy.js';

const fixture = join(REPO, 'test/fixtures/add-a-tool');
const MARKER = '// New tools go above this line';
const copies: string[] = [];
afterAll(() => {
  for (const c of copies) rmSync(c, { recursive: true, force: true });
});

describe('adding a tool (docs/CONTRIBUTING.md)', () => {
  const w = walkthrough('Adding a tool');

  it('names two new source files, a test, and two one-line registry edits — and the fixture holds exactly the new files', () => {
    expect(w.files.filter((f) => f.isNew).map((f) => f.path)).toEqual([
      'core/tools/fs-count.ts',
      'activities/tools/fs-count.ts',
      'test/activities/fs-count.test.ts',
    ]);
    expect(w.files.filter((f) => !f.isNew).map((f) => f.path)).toEqual([...w.registry.keys()]);
    for (const [, lines] of w.registry) {
      expect(lines.filter((l) => l.startsWith('import '))).toHaveLength(1);
      expect(lines.filter((l) => !l.startsWith('import '))).toHaveLength(1);
    }
    expect(filesUnder(fixture).sort()).toEqual(
      w.files
        .filter((f) => f.isNew)
        .map((f) => f.path)
        .sort(),
    );
  });

  it('the walkthrough applied to a copy of the repository: fs.count runs through a real worker, denied outside its grant', () => {
    const copy = copyRepository('test/fixtures/add-a-tool/');
    copies.push(copy);
    const grew = applyWalkthrough(copy, fixture, w, MARKER);
    for (const [path, lines] of w.registry) expect(grew.get(path), path).toBe(lines.length);
    const run = runTestIn(copy, 'test/activities/fs-count.test.ts', inject('temporalAddress'));
    expect(run.status, run.output.slice(-4000)).toBe(0);
    expect(run.output).toContain('FS_COUNT_SCENARIO_PASSED');
  }, 320_000);

  it('without the catalog line the copy does not offer the tool (the check can fail)', () => {
    const copy = copies[0];
    if (!copy) return;
    const catalog = join(copy, 'core/tool-catalog.ts');
    writeFileSync(catalog, readFileSync(catalog, 'utf8').replace(/^ {2}fsCountTool,\n/m, ''));
    const run = runTestIn(copy, 'test/activities/fs-count.test.ts', inject('temporalAddress'));
    expect(run.status).not.toBe(0);
    expect(run.output).not.toContain('FS_COUNT_SCENARIO_PASSED');
  }, 320_000);
});
