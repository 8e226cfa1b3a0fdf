/** git.status / git.diff / git.commit against real temporary repositories (no mocks). */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGitTools } from '../../activities/tools/git-tools.js';
import { createMemoryIntentStore } from '../../activities/tools/intent-store.js';
import { CapabilitySet } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import { gitCommitTool, gitDiffTool, gitStatusTool } from '../../core/tools/git-tools.js';

const GIT_TOOLS = [gitStatusTool, gitDiffTool, gitCommitTool];
import { toolContext } from '../support/tool-context.js';

/** The turn's grants the tools re-check what they opened against (runTool hands them the effective set). */
const HOST_GRANTS = ['git.read', 'git.write'];
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
const [status, diff, commit] = createGitTools({ intents, env }) as [
  ReturnType<typeof createGitTools>[0],
  ReturnType<typeof createGitTools>[0],
  ReturnType<typeof createGitTools>[0],
];

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
    const s1 = await status.run({ repo }, toolContext({ held: HOST_GRANTS }));
    expect(s1.kind).toBe('completed');
    if (s1.kind !== 'completed') return;
    expect(s1.output).toMatchObject({ repo, entries: [{ status: '??', path: 'a.txt' }] });

    const c1Ctx = toolContext({ held: HOST_GRANTS });
    const c1 = await commit.run({ repo, message: '--first: commit $(touch x)', paths: ['a.txt'] }, c1Ctx);
    expect(c1).toMatchObject({ kind: 'completed', verified: 'Verified' });
    expect(sh(repo, 'log', '-1', '--format=%B').trim()).toBe('--first: commit $(touch x)');
    expect(existsSync(join(repo, 'x'))).toBe(false);
    expect(intents.get(c1Ctx.idemKey)?.state).toBe('finished');

    // A retry of the same activity (same idemKey) does not commit twice.
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const again = await aivyxFailure(commit.run({ repo, message: 'again', paths: ['a.txt'] }, c1Ctx));
    expect(again.detail).toMatchObject({ atMostOnce: true });

    const d = await diff.run({ repo }, toolContext({ held: HOST_GRANTS }));
    expect(d.kind === 'completed' && (d.output as { diff: string }).diff).toContain('+two');
    sh(repo, 'add', 'a.txt');
    const staged = await diff.run({ repo, staged: true, paths: ['a.txt'] }, toolContext({ held: HOST_GRANTS }));
    expect(staged.kind === 'completed' && (staged.output as { diff: string }).diff).toContain('-one');

    const c2 = await commit.run({ repo, message: 'second' }, toolContext({ held: HOST_GRANTS }));
    expect(c2).toMatchObject({ kind: 'completed', verified: 'Verified' });
    const nothing = await aivyxFailure(commit.run({ repo, message: 'third' }, toolContext({ held: HOST_GRANTS })));
    expect(nothing.message).toContain('nothing to commit');
  });

  it('resolves the scope to the real toplevel, and never discovers a repository above the given directory', async () => {
    expect(await status.resolveScope({ repo })).toBe(`git.read:${repo}`);
    expect(await commit.resolveScope({ repo, message: 'm' })).toBe(`git.write:${repo}`);
    mkdirSync(join(repo, 'sub'), { recursive: true });
    const e = await aivyxFailure(status.resolveScope({ repo: join(repo, 'sub') }));
    expect(e.message).toMatch(/is not the top-level directory of a git work tree/);
    expect(e.hint).toMatch(/holds \.git/);
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
    expect((await status.run({ repo }, toolContext({ held: HOST_GRANTS }))).kind).toBe('completed');
    expect((await commit.run({ repo, message: 'c', paths: ['f.txt'] }, toolContext({ held: HOST_GRANTS }))).kind).toBe('completed');
    writeFileSync(join(repo, 'f.txt'), 'y\n');
    expect((await diff.run({ repo }, toolContext({ held: HOST_GRANTS }))).kind).toBe('completed');
    expect((await diff.run({ repo, staged: true }, toolContext({ held: HOST_GRANTS }))).kind).toBe('completed');
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses repositories with filter drivers or includes (CapabilityDenied), without running them', async () => {
    const repo = makeRepo('filters');
    const marker = join(root, 'FILTERED');
    sh(repo, 'config', 'filter.evil.clean', `touch ${marker}`);
    writeFileSync(join(repo, '.gitattributes'), '* filter=evil\n');
    writeFileSync(join(repo, 'f.txt'), 'x\n');
    const e = await aivyxFailure(status.run({ repo }, toolContext({ held: HOST_GRANTS })));
    expect(e.kind).toBe('CapabilityDenied');
    expect((await aivyxFailure(commit.run({ repo, message: 'm', paths: ['f.txt'] }, toolContext({ held: HOST_GRANTS })))).kind).toBe(
      'CapabilityDenied',
    );
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

describe('where the repository really lives', () => {
  /** A repository outside the grant with a secret committed in it. */
  function secretRepo(name: string): string {
    const secret = makeRepo(name);
    writeFileSync(join(secret, 'id_rsa'), 'SECRET KEY MATERIAL\n');
    sh(secret, 'add', 'id_rsa');
    sh(secret, 'commit', '-q', '-m', 'secret');
    return secret;
  }
  const granted = join(root, 'granted-tree');
  mkdirSync(granted, { recursive: true });
  const held = [`git.read:${granted}/**`, `git.write:${granted}/**`];
  const grants = CapabilitySet.from(held);

  it('a planted .git FILE (gitdir: elsewhere) does not reach a repository outside the grant', async () => {
    const secret = secretRepo('secret-for-gitfile');
    const planted = join(granted, 'innocent');
    mkdirSync(planted);
    writeFileSync(join(planted, '.git'), `gitdir: ${join(secret, '.git')}\n`);
    // The lexical scope is inside the grant; the resolved one covers the real git directory, which is not.
    expect(grants.grants(status.descriptor.requiredScope({ repo: planted }))).toBe(true);
    const resolved = await status.resolveScope({ repo: planted });
    expect(grants.grants(resolved), resolved).toBe(false);
    expect(grants.grants(await diff.resolveScope({ repo: planted }))).toBe(false);
    // The run re-checks on its own (the activity's check may have run before a swap): refused, nothing shown.
    // Started one at a time: a second promise built beside the first rejects before anything awaits it.
    for (const run of [
      () => status.run({ repo: planted }, toolContext({ held })),
      () => diff.run({ repo: planted, staged: true }, toolContext({ held })),
    ]) {
      const e = await aivyxFailure(run());
      expect(e.kind).toBe('CapabilityDenied');
      expect(e.message).toContain(join(secret, '.git'));
      expect(JSON.stringify(e.toData())).not.toContain('SECRET KEY');
    }
    const before = sh(secret, 'rev-parse', 'HEAD');
    expect((await aivyxFailure(commit.run({ repo: planted, message: 'into the secret repo' }, toolContext({ held })))).kind).toBe(
      'CapabilityDenied',
    );
    expect(sh(secret, 'rev-parse', 'HEAD')).toBe(before);
  });

  it('a planted commondir (a .git directory borrowing another repository) is refused the same way', async () => {
    const secret = secretRepo('secret-for-commondir');
    const planted = join(granted, 'borrower');
    mkdirSync(join(planted, '.git'), { recursive: true });
    writeFileSync(join(planted, '.git', 'commondir'), `${join(secret, '.git')}\n`);
    writeFileSync(join(planted, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const resolved = await status.resolveScope({ repo: planted }).catch((e: unknown) => e);
    if (typeof resolved === 'string') expect(grants.grants(resolved), resolved).toBe(false);
    const e = await aivyxFailure(status.run({ repo: planted }, toolContext({ held })));
    expect(e.kind === 'CapabilityDenied' || /not the top-level directory/.test(e.message)).toBe(true);
    expect(JSON.stringify(e.toData())).not.toContain('id_rsa');
  });

  it('objects borrowed through objects/info/alternates are refused', async () => {
    const secret = secretRepo('secret-for-alternates');
    const borrower = makeRepo('granted-tree/alternates');
    writeFileSync(join(borrower, '.git', 'objects', 'info', 'alternates'), `${join(secret, '.git', 'objects')}\n`);
    const head = sh(secret, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(borrower, '.git', 'refs', 'heads', 'main'), `${head}\n`);
    const e = await aivyxFailure(diff.run({ repo: borrower, staged: true }, toolContext({ held })));
    expect(e.kind).toBe('CapabilityDenied');
    expect(e.message).toMatch(/borrows objects/);
    expect(JSON.stringify(e.toData())).not.toContain('SECRET KEY');
  });

  it('a repository that is whole inside the grant still works', async () => {
    const ok = makeRepo('granted-tree/ok');
    writeFileSync(join(ok, 'f.txt'), 'x\n');
    expect(grants.grants(await status.resolveScope({ repo: ok }))).toBe(true);
    expect(await status.run({ repo: ok }, toolContext({ held }))).toMatchObject({
      kind: 'completed',
      output: { entries: [{ status: '??', path: 'f.txt' }] },
    });
    rmSync(ok, { recursive: true });
  });
});
