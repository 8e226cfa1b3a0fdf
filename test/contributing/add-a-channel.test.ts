/**
 * docs/CONTRIBUTING.md "Adding a channel" is true: a copy of this repository with the folder its table
 * names and the one registry line runs the example channel through the contract — a real turn arrives
 * from it and is answered on it, and a sender the channel does not trust gets the lower tier (the copy's
 * own test, test/fixtures/add-a-channel/test/channels/lines.test.ts).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { applyWalkthrough, copyRepository, filesUnder, REPO, runTestIn, walkthrough } from '../support/repo-copy.js';

const fixture = join(REPO, 'test/fixtures/add-a-channel');
const MARKER = '// New channels go above this line';
const copies: string[] = [];
afterAll(() => {
  for (const c of copies) rmSync(c, { recursive: true, force: true });
});

describe('adding a channel (docs/CONTRIBUTING.md)', () => {
  const w = walkthrough('Adding a channel');

  it('names one folder (one file), its test, and one registry line — and the fixture holds exactly the new files', () => {
    expect(w.files.filter((f) => f.isNew).map((f) => f.path)).toEqual(['channels/lines/channel.ts', 'test/channels/lines.test.ts']);
    expect(w.files.filter((f) => !f.isNew).map((f) => f.path)).toEqual(['channels/registry.ts']);
    const lines = w.registry.get('channels/registry.ts') ?? [];
    expect(lines.filter((l) => l.startsWith('import '))).toHaveLength(1);
    expect(lines.filter((l) => !l.startsWith('import '))).toHaveLength(1);
    expect(filesUnder(fixture).sort()).toEqual(
      w.files
        .filter((f) => f.isNew)
        .map((f) => f.path)
        .sort(),
    );
  });

  it('the walkthrough applied to a copy: the example channel answers a real turn, and an unlisted sender is Untrusted', () => {
    const copy = copyRepository('test/fixtures/add-a-channel/');
    copies.push(copy);
    const grew = applyWalkthrough(copy, fixture, w, MARKER);
    expect(grew.get('channels/registry.ts')).toBe(2);
    const run = runTestIn(copy, 'test/channels/lines.test.ts', inject('temporalAddress'));
    expect(run.status, run.output.slice(-4000)).toBe(0);
    expect(run.output).toContain('LINES_SCENARIO_PASSED');
  }, 320_000);

  it('without the registry line the copy has no such channel (the check can fail)', () => {
    const copy = copies[0];
    if (!copy) return;
    const registry = join(copy, 'channels/registry.ts');
    writeFileSync(registry, readFileSync(registry, 'utf8').replace(/^ {2}linesChannel,\n/m, ''));
    const run = runTestIn(copy, 'test/channels/lines.test.ts', inject('temporalAddress'));
    expect(run.status).not.toBe(0);
    expect(run.output).not.toContain('LINES_SCENARIO_PASSED');
  }, 320_000);
});
