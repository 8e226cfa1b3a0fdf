/**
 * The map stays a map: README.md names every top-level folder and links DESIGN, CONTRIBUTING and the
 * docs index; docs/README.md lists every page in docs/, and every link in either resolves.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The top-level folders holding committed files (not node_modules, an editor's settings, …). */
function committedFolders(): string[] {
  const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n');
  return [...new Set(files.filter((f) => f.includes('/')).map((f) => f.slice(0, f.indexOf('/'))))];
}

/** The relative targets of the markdown links in `path`, resolved against its folder. */
function links(path: string): string[] {
  return [...read(path).matchAll(/\]\(([^)#\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => join(dirname(path), target));
}

describe('README.md', () => {
  it('names every top-level folder on a line of its own', () => {
    const folders = committedFolders();
    expect(folders).toContain('core');
    const readme = read('README.md');
    expect(folders.filter((f) => !new RegExp(`^- \`${f.replace('.', '\\.')}/\``, 'm').test(readme))).toEqual([]);
  });

  it('links DESIGN.md, docs/CONTRIBUTING.md and docs/README.md, and every link resolves', () => {
    const targets = links('README.md');
    expect(targets).toEqual(expect.arrayContaining(['DESIGN.md', 'docs/CONTRIBUTING.md', 'docs/README.md']));
    expect(targets.filter((t) => !existsSync(join(root, t)))).toEqual([]);
  });
});

describe('docs/README.md', () => {
  it('lists every page in docs/, and every link resolves', () => {
    const targets = links('docs/README.md');
    const pages = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md') && f !== 'README.md');
    expect(pages.filter((p) => !targets.includes(join('docs', p)))).toEqual([]);
    expect(targets.filter((t) => !existsSync(join(root, t)))).toEqual([]);
  });
});
