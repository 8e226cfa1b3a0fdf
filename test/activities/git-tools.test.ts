/** git.status / git.diff / git.commit against real temporary repositories (no mocks). */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGitTools } from '../../activities/tools/git-tools.js';
import { createMemoryIntentStore } from '../../activities/tools/intent-store.js';
import { CapabilitySet } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import { GIT_TOOLS, gitCommitTool, gitDiffTool, gitStatusTool } from '../../core/tools/git-tools.js';
import { toolContext } from '../support/tool-context.js';
import { aivyxFailure } from '../support/aivyx-failure.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-git-')));
const env = { PATH: process.env.PATH, HOME: root, LANG: 'C' };

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, encoding: 'utf8' });
}

function makeRepo(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  sh(dir, 'init', '-q', '-b', 'main');
  sh(dir, 'config', 'user.name', 'Test');
  sh(dir, 'config', 'user.email', 'test@example.com');
  return dir;
}


const intents = createMemoryIntentStore();
const [status, diff, commit] = createGitTools({ intents, env }) as [ReturnType<typeof createGitTools>[0], ReturnType<typeof createGitTools>[0], ReturnType<typeof createGitTools>[0]];

describe('git descriptors', () => {
  it('derive git.read / git.write scopes from the normalized repo path', () => {
    expect(GIT_TOOLS.map((t) => t.id)).toEqual(['git.status', 'git.diff', 'git.commit']);
    expect(gitStatusTool.requiredScope({ repo: '/home/u/repo/' })).toBe('git.read:/home/u/repo');
    expect(gitDiffTool.requiredScope({ repo: '/home/u/x/../repo', staged: true, paths: ['a.txt'] })).toBe('git.read:/home/u/repo');
    expect(gitCommitTool.requiredScope({ repo: '/home/u/repo', message: 'm' })).toBe('git.write:/home/u/repo');
    expect(CapabilitySet.from(['git.read:/home/u/**']).grants(gitStatusTool.requiredScope({ repo: '/home/u/repo' }))).toBe(true);
    expect(gitCommitTool.idempotency).toBe('at-most-once');
  });

  it('refuse inputs that could become options or globs', () => {
    const bad = [{ repo: 'rel' }, { repo: '/a/*' }, { repo: '/a', extra: 1 }, { repo: '/a', c: 'core.pager=sh' }];
    for (const input of bad) expect(() => gitStatusTool.requiredScope(input)).toThrow(AivyxError);
    expect(() => gitCommitTool.requiredScope({ repo: '/a', message: '' })).toThrow(AivyxError);
    expect(() => gitDiffTool.requiredScope({ repo: '/a', paths: [] })).toThrow(AivyxError);
    expect(() => gitDiffTool.requiredScope({ repo: '/a', paths: ['a\nb'] })).toThrow(AivyxError);
  });
});

describe('git tools on a real repository', () => {
  const repo = makeRepo('plain');

  it('status, diff, commit (verified by reading HEAD back), and at-most-once', async () => {
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    const s1 = await status.run({ repo }, toolContext());
    expect(s1.kind).toBe('completed');
    if (s1.kind !== 'completed') return;
    expect(s1.output).toMatchObject({ repo, entries: [{ status: '??', path: 'a.txt' }] });

    const c1Ctx = toolContext();
    const c1 = await commit.run({ repo, message: '--first: commit $(touch x)', paths: ['a.txt'] }, c1Ctx);
    expect(c1).toMatchObject({ kind: 'completed', verified: 'Verified' });
    expect(sh(repo, 'log', '-1', '--format=%B').trim()).toBe('--first: commit $(touch x)');
    expect(existsSync(join(repo, 'x'))).toBe(false);
    expect(intents.get(c1Ctx.idemKey)?.state).toBe('finished');

    // A retry of the same activity (same idemKey) does not commit twice.
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const again = await aivyxFailure(commit.run({ repo, message: 'again', paths: ['a.txt'] }, c1Ctx));
    expect(again.detail).toMatchObject({ atMostOnce: true });

    const d = await diff.run({ repo }, toolContext());
    expect(d.kind === 'completed' && (d.output as { diff: string }).diff).toContain('+two');
    sh(repo, 'add', 'a.txt');
    const staged = await diff.run({ repo, staged: true, paths: ['a.txt'] }, toolContext());
    expect(staged.kind === 'completed' && (staged.output as { diff: string }).diff).toContain('-one');

    const c2 = await commit.run({ repo, message: 'second' }, toolContext());
    expect(c2).toMatchObject({ kind: 'completed', verified: 'Verified' });
    const nothing = await aivyxFailure(commit.run({ repo, message: 'third' }, toolContext()));
    expect(nothing.message).toContain('nothing to commit');
  });

  it('resolves the scope to the real toplevel', async () => {
    mkdirSync(join(repo, 'sub'), { recursive: true });
    expect(await status.resolveScope({ repo: join(repo, 'sub') })).toBe(`git.read:${repo}`);
    expect(await commit.resolveScope({ repo, message: 'm' })).toBe(`git.write:${repo}`);
  });
});

describe('hostile repositories never make git execute anything', () => {
  it('ignores core.pager, core.fsmonitor, core.hooksPath, hooks and gpg.program', async () => {
    const repo = makeRepo('hostile');
    const marker = join(root, 'PWNED');
    const cmd = `touch ${marker}`;
    sh(repo, 'config', 'core.pager', cmd);
    sh(repo, 'config', 'pager.status', 'true');
    sh(repo, 'config', 'pager.diff', 'true');
    sh(repo, 'config', 'core.fsmonitor', cmd);
    sh(repo, 'config', 'commit.gpgSign', 'true');
    sh(repo, 'config', 'gpg.program', cmd);
    sh(repo, 'config', 'diff.external', cmd);
    mkdirSync(join(repo, 'myhooks'));
    sh(repo, 'config', 'core.hooksPath', join(repo, 'myhooks'));
    for (const dir of [join(repo, '.git', 'hooks'), join(repo, 'myhooks')]) {
      for (const hook of ['pre-commit', 'commit-msg', 'post-commit', 'prepare-commit-msg', 'post-index-change', 'fsmonitor-watchman']) {
        writeFileSync(join(dir, hook), `#!/bin/sh\n${cmd}\n`, { mode: 0o755 });
      }
    }
    writeFileSync(join(repo, 'f.txt'), 'x\n');
    expect((await status.run({ repo }, toolContext())).kind).toBe('completed');
    expect((await commit.run({ repo, message: 'c', paths: ['f.txt'] }, toolContext())).kind).toBe('completed');
    writeFileSync(join(repo, 'f.txt'), 'y\n');
    expect((await diff.run({ repo }, toolContext())).kind).toBe('completed');
    expect((await diff.run({ repo, staged: true }, toolContext())).kind).toBe('completed');
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses repositories with filter drivers or includes (CapabilityDenied), without running them', async () => {
    const repo = makeRepo('filters');
    const marker = join(root, 'FILTERED');
    sh(repo, 'config', 'filter.evil.clean', `touch ${marker}`);
    writeFileSync(join(repo, '.gitattributes'), '* filter=evil\n');
    writeFileSync(join(repo, 'f.txt'), 'x\n');
    const e = await aivyxFailure(status.run({ repo }, toolContext()));
    expect(e.kind).toBe('CapabilityDenied');
    expect((await aivyxFailure(commit.run({ repo, message: 'm', paths: ['f.txt'] }, toolContext()))).kind).toBe('CapabilityDenied');
    expect(existsSync(marker)).toBe(false);
  });

  it('catches a symlinked repo path that leaves the grant (resolveScope)', async () => {
    const outside = makeRepo('outside-repo');
    const granted = join(root, 'granted');
    mkdirSync(granted);
    const link = join(granted, 'link');
    symlinkSync(outside, link);
    const held = CapabilitySet.from([`git.read:${granted}/**`]);
    // The lexical scope looks fine; the resolved one names the real repo outside the grant.
    expect(held.grants(status.descriptor.requiredScope({ repo: link }))).toBe(true);
    const resolved = await status.resolveScope({ repo: link });
    expect(resolved).toBe(`git.read:${outside}`);
    expect(held.grants(resolved)).toBe(false);
  });
});
