/**
 * Tool confinement on canonical forms, against the real filesystem: a symlink swapped in between
 * the activity's scope check and the tool's use (and between the tool's own check and its open)
 * is caught on what was really opened; writes and deletes go through the checked directory; the
 * data directory is out of reach at every tier; `fs.delete:/x/**` never deletes `/x`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProtectedPath, PROC_FD } from '../../activities/tools/confinement.js';
import { createFsDeleteTool } from '../../activities/tools/fs-delete.js';
import { createFsMetadataTool } from '../../activities/tools/fs-metadata.js';
import { createFsReadTool } from '../../activities/tools/fs-read.js';
import { createFsWriteTool } from '../../activities/tools/fs-write.js';
import { createGitTools } from '../../activities/tools/git-tools.js';
import { createMemoryIntentStore } from '../../activities/tools/intent-store.js';
import { createShellExecTool } from '../../activities/tools/shell-exec.js';
import type { ToolImplementation } from '../../activities/tools/tool-implementation.js';
import { CapabilitySet, Scope } from '../../core/capability/index.js';
import { dataDirProtection } from '../../infra/data-dir.js';
import { aivyxFailure } from '../support/aivyx-failure.js';
import { toolContext } from '../support/tool-context.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-confine-')));

/** What runTool does before `run`: the declared and the resolved scope must both be granted. */
async function activityCheck(tool: ToolImplementation, input: unknown, held: readonly string[]): Promise<boolean> {
  const set = CapabilitySet.from(held);
  return set.grants(Scope.parse(tool.descriptor.requiredScope(input))) && set.grants(Scope.parse(await tool.resolveScope(input)));
}

/** A granted tree and an outside tree, each with docs/note.txt; returns a swap that links granted/docs to outside/docs. */
function trees(name: string): { granted: string; outside: string; note: string; swap: () => void } {
  const base = join(root, name);
  const granted = join(base, 'granted');
  const outside = join(base, 'outside');
  for (const [dir, text] of [
    [granted, 'public notes'],
    [outside, 'SECRET: ssh key material'],
  ] as const) {
    mkdirSync(join(dir, 'docs'), { recursive: true });
    writeFileSync(join(dir, 'docs', 'note.txt'), text);
  }
  return {
    granted,
    outside,
    note: join(granted, 'docs', 'note.txt'),
    swap: () => {
      renameSync(join(granted, 'docs'), join(granted, 'docs.orig'));
      symlinkSync(join(outside, 'docs'), join(granted, 'docs'));
    },
  };
}

describe('a symlink swapped in after the check never escapes the grant', () => {
  it("fs.read: swapped between the activity's scope check and the run → denied, nothing read", async () => {
    const t = trees('read-after-check');
    const tool = createFsReadTool();
    const held = [`fs.read:${t.granted}/**`];
    expect(await activityCheck(tool, { path: t.note }, held)).toBe(true);
    t.swap();
    const e = await aivyxFailure(tool.run({ path: t.note }, toolContext({ held })));
    expect(e.kind).toBe('CapabilityDenied');
    expect(e.message).toContain(join(t.outside, 'docs', 'note.txt'));
    expect(JSON.stringify(e.toData())).not.toContain('SECRET');
  });

  it("fs.read: swapped between the tool's own check and its open → the opened descriptor gives it away", async () => {
    const t = trees('read-before-open');
    const held = [`fs.read:${t.granted}/**`];
    let swapped = false;
    const tool = createFsReadTool({
      beforeOpen: async () => {
        t.swap();
        swapped = true;
      },
    });
    const e = await aivyxFailure(tool.run({ path: t.note }, toolContext({ held })));
    expect(swapped).toBe(true);
    expect(e.kind).toBe('CapabilityDenied');
    expect(e.message).toMatch(/changed between the check and its use/);
    expect(JSON.stringify(e.toData())).not.toContain('SECRET');
  });

  it("fs.write: swapped between the activity's check and the run → denied, the outside file untouched", async () => {
    const t = trees('write-after-check');
    const tool = createFsWriteTool();
    const held = [`fs.write:${t.granted}/**`];
    const input = { path: t.note, content: 'ssh-ed25519 AAAA attacker' };
    expect(await activityCheck(tool, input, held)).toBe(true);
    t.swap();
    expect((await aivyxFailure(tool.run(input, toolContext({ held })))).kind).toBe('CapabilityDenied');
    expect(readFileSync(join(t.outside, 'docs', 'note.txt'), 'utf8')).toBe('SECRET: ssh key material');
  });

  it('fs.write: swapped between the check and the open of its directory → denied, nothing written outside', async () => {
    const t = trees('write-before-open');
    const held = [`fs.write:${t.granted}/**`];
    let swapped = false;
    const tool = createFsWriteTool({ beforeOpen: async () => ((swapped = true), t.swap()) });
    const e = await aivyxFailure(tool.run({ path: join(t.granted, 'docs', 'new.txt'), content: 'planted' }, toolContext({ held })));
    expect(swapped).toBe(true);
    expect(e.kind).toBe('CapabilityDenied');
    expect(existsSync(join(t.outside, 'docs', 'new.txt'))).toBe(false);
  });

  it.skipIf(!PROC_FD)('fs.write: a swap after the directory is open cannot redirect the temp file or the rename', async () => {
    // Writes address <dir fd>/<name>: the directory that was checked, wherever its name points now.
    const t = trees('write-after-open');
    const held = [`fs.write:${t.granted}/**`];
    const tool = createFsWriteTool();
    const { anchorDirectory } = await import('../../activities/tools/confinement.js');
    const dir = await anchorDirectory('test', join(t.granted, 'docs'));
    try {
      t.swap();
      writeFileSync(dir.entry('via-fd.txt'), 'through the descriptor');
    } finally {
      await dir.close();
    }
    expect(readFileSync(join(t.granted, 'docs.orig', 'via-fd.txt'), 'utf8')).toBe('through the descriptor');
    expect(existsSync(join(t.outside, 'docs', 'via-fd.txt'))).toBe(false);
    // And the tool itself refuses the swapped path afterwards.
    expect((await aivyxFailure(tool.run({ path: join(t.granted, 'docs', 'x.txt'), content: 'x' }, toolContext({ held })))).kind).toBe(
      'CapabilityDenied',
    );
  });

  it("fs.delete: swapped between the activity's check and the run → denied, the outside file survives", async () => {
    const t = trees('delete-after-check');
    const tool = createFsDeleteTool({ home: join(root, 'no-home') });
    const held = [`fs.delete:${t.granted}/**`];
    expect(await activityCheck(tool, { path: t.note }, held)).toBe(true);
    t.swap();
    expect((await aivyxFailure(tool.run({ path: t.note }, toolContext({ held })))).kind).toBe('CapabilityDenied');
    expect(existsSync(join(t.outside, 'docs', 'note.txt'))).toBe(true);
  });

  it('fs.delete: swapped between the check and the open of its directory → denied, the outside file survives', async () => {
    const t = trees('delete-before-open');
    const held = [`fs.delete:${t.granted}/**`];
    const tool = createFsDeleteTool({ home: join(root, 'no-home'), beforeOpen: async () => t.swap() });
    expect((await aivyxFailure(tool.run({ path: t.note }, toolContext({ held })))).kind).toBe('CapabilityDenied');
    expect(existsSync(join(t.outside, 'docs', 'note.txt'))).toBe(true);
  });

  it('fs.metadata: a swapped parent is checked where it really is', async () => {
    const t = trees('metadata-after-check');
    const tool = createFsMetadataTool();
    const held = [`fs.metadata:${t.granted}/**`];
    expect(await activityCheck(tool, { path: t.note }, held)).toBe(true);
    t.swap();
    expect((await aivyxFailure(tool.run({ path: t.note }, toolContext({ held })))).kind).toBe('CapabilityDenied');
  });

  it('legitimate links inside the grant still work, and a FIFO does not hang a read', async () => {
    const t = trees('legit');
    symlinkSync(join(t.granted, 'docs', 'note.txt'), join(t.granted, 'alias.txt'));
    const held = [`fs.read:${t.granted}/**`];
    expect(await createFsReadTool().run({ path: join(t.granted, 'alias.txt') }, toolContext({ held }))).toMatchObject({
      output: { content: 'public notes', path: t.note },
    });
    execFileSync('mkfifo', [join(t.granted, 'fifo')]);
    expect((await aivyxFailure(createFsReadTool().run({ path: join(t.granted, 'fifo') }, toolContext({ held })))).message).toMatch(
      /not a regular file/,
    );
  });
});

describe('fs.delete:/x/** never deletes /x', () => {
  it('is denied by the scope check and by the tool, and /x survives', async () => {
    const x = join(root, 'x');
    mkdirSync(join(x, 'inner'), { recursive: true });
    writeFileSync(join(x, 'inner', 'f'), 'f');
    const tool = createFsDeleteTool({ home: join(root, 'no-home') });
    const held = [`fs.delete:${x}/**`];
    expect(await activityCheck(tool, { path: x, recursive: true }, held)).toBe(false);
    expect((await aivyxFailure(tool.run({ path: x, recursive: true }, toolContext({ held })))).kind).toBe('CapabilityDenied');
    expect(existsSync(join(x, 'inner', 'f'))).toBe(true);
    // What is under it may go.
    expect(await activityCheck(tool, { path: join(x, 'inner'), recursive: true }, held)).toBe(true);
    expect(await tool.run({ path: join(x, 'inner'), recursive: true }, toolContext({ held }))).toMatchObject({
      verified: 'Verified',
      output: { existed: true },
    });
    expect(existsSync(x)).toBe(true);
  });
});

describe('the data directory is outside every grant below Kernel', () => {
  const home = join(root, 'fake-home');
  const dataDir = join(home, '.aivyx');
  const workspace = join(dataDir, 'workspace');
  const passphraseFile = join(root, 'elsewhere', 'passphrase');
  mkdirSync(join(dataDir, 'pglite'), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(root, 'elsewhere'), { recursive: true });
  writeFileSync(join(dataDir, 'rest-token'), 'REST-TOKEN-VALUE', { mode: 0o600 });
  writeFileSync(join(dataDir, 'pglite', 'PG_VERSION'), '16');
  writeFileSync(passphraseFile, 'PASSPHRASE-VALUE', { mode: 0o600 });
  writeFileSync(join(workspace, 'notes.txt'), 'workspace notes');
  symlinkSync(join(dataDir, 'rest-token'), join(workspace, 'token-link'));
  const protectedPaths = dataDirProtection({ home: dataDir, passphraseFile });
  // Trusted: every base bare. Nothing below Kernel holds kernel.data_dir.
  const trusted = ['fs.read', 'fs.write', 'fs.delete', 'fs.metadata', 'git.read', 'git.write', 'shell.exec'];
  const read = createFsReadTool({ protectedPaths });
  const write = createFsWriteTool({ protectedPaths });
  const del = createFsDeleteTool({ home, protectedPaths });
  const meta = createFsMetadataTool({ protectedPaths });

  it('what is protected: the data directory, the passphrase file elsewhere, /proc; not the workspace', () => {
    for (const p of [
      dataDir,
      join(dataDir, 'rest-token'),
      join(dataDir, 'pglite', 'PG_VERSION'),
      passphraseFile,
      '/proc/self/environ',
      `/proc/${process.pid}/environ`,
    ])
      expect(isProtectedPath(p, protectedPaths), p).toBe(true);
    for (const p of [workspace, join(workspace, 'notes.txt'), home, join(home, '.ssh', 'id_rsa'), `${dataDir}x`])
      expect(isProtectedPath(p, protectedPaths), p).toBe(false);
  });

  it('reads of rest-token, the PGlite files, the passphrase file (outside the data dir) and /proc/self/environ resolve to kernel.data_dir and are denied, even for Trusted', async () => {
    for (const path of [
      join(dataDir, 'rest-token'),
      join(dataDir, 'pglite', 'PG_VERSION'),
      passphraseFile,
      join(workspace, 'token-link'),
      '/proc/self/environ',
      join(workspace, '..', 'rest-token'),
    ]) {
      const scope = await read.resolveScope({ path });
      expect(scope, path).toMatch(/^kernel\.data_dir:/);
      expect(await activityCheck(read, { path }, trusted), path).toBe(false);
      const e = await aivyxFailure(read.run({ path }, toolContext({ held: trusted })));
      expect(e.kind, path).toBe('CapabilityDenied');
      expect(JSON.stringify(e.toData())).not.toMatch(/REST-TOKEN-VALUE|PASSPHRASE-VALUE/);
    }
  });

  it('writes, deletes and metadata into the data directory are denied; deleting a directory that holds it too', async () => {
    expect(await write.resolveScope({ path: join(dataDir, 'rest-token'), content: 'x' })).toBe(
      `kernel.data_dir:${join(dataDir, 'rest-token')}`,
    );
    expect(
      (await aivyxFailure(write.run({ path: join(dataDir, 'rest-token'), content: 'attacker' }, toolContext({ held: trusted })))).kind,
    ).toBe('CapabilityDenied');
    expect((await aivyxFailure(write.run({ path: passphraseFile, content: 'attacker' }, toolContext({ held: trusted })))).kind).toBe(
      'CapabilityDenied',
    );
    expect((await aivyxFailure(write.run({ path: join(dataDir, 'new-file'), content: 'x' }, toolContext({ held: trusted })))).kind).toBe(
      'CapabilityDenied',
    );
    expect(readFileSync(join(dataDir, 'rest-token'), 'utf8')).toBe('REST-TOKEN-VALUE');
    expect(existsSync(join(dataDir, 'new-file'))).toBe(false);
    for (const path of [join(dataDir, 'pglite'), dataDir, home]) {
      expect(await del.resolveScope({ path, recursive: true }), path).toMatch(/^kernel\.data_dir:/);
      expect((await aivyxFailure(del.run({ path, recursive: true }, toolContext({ held: trusted })))).kind, path).toMatch(
        /CapabilityDenied|Tool/,
      );
    }
    expect(existsSync(join(dataDir, 'pglite', 'PG_VERSION'))).toBe(true);
    expect(await meta.resolveScope({ path: join(dataDir, 'rest-token') })).toMatch(/^kernel\.data_dir:/);
    expect(await meta.resolveScope({ path: join(workspace, 'token-link') })).toMatch(/^kernel\.data_dir:/);
    expect((await aivyxFailure(meta.run({ path: join(workspace, 'token-link') }, toolContext({ held: trusted })))).kind).toBe(
      'CapabilityDenied',
    );
  });

  it('the workspace stays usable: read, write, metadata and delete inside it', async () => {
    expect(await read.run({ path: join(workspace, 'notes.txt') }, toolContext({ held: trusted }))).toMatchObject({
      output: { content: 'workspace notes' },
    });
    expect(await write.run({ path: join(workspace, 'out.txt'), content: 'ok' }, toolContext({ held: trusted }))).toMatchObject({
      verified: 'Verified',
    });
    expect(await meta.run({ path: join(workspace, 'out.txt') }, toolContext({ held: trusted }))).toMatchObject({
      output: { exists: true, type: 'file' },
    });
    expect(await del.run({ path: join(workspace, 'out.txt') }, toolContext({ held: trusted }))).toMatchObject({ verified: 'Verified' });
  });

  it('shell.exec cannot run in the data directory (nothing is spawned); elsewhere it runs', async () => {
    const intents = createMemoryIntentStore();
    const shell = createShellExecTool({ intents, protectedPaths, env: { PATH: process.env.PATH, HOME: home } });
    const marker = join(root, 'shell-ran');
    const input = { argv: ['touch', marker], cwd: join(dataDir, 'pglite') };
    expect(await shell.resolveScope(input)).toBe(`kernel.data_dir:${join(dataDir, 'pglite')}`);
    const ctx = toolContext({ held: trusted });
    expect((await aivyxFailure(shell.run(input, ctx))).kind).toBe('CapabilityDenied');
    expect(existsSync(marker)).toBe(false);
    expect(intents.get(ctx.idemKey)).toBeUndefined(); // refused before the intent was claimed
    expect(await shell.run({ argv: ['touch', marker], cwd: workspace }, toolContext({ held: trusted }))).toMatchObject({
      output: { exitCode: 0 },
    });
    expect(existsSync(marker)).toBe(true);
  });

  it('git: a repository inside the data directory is refused; a data directory inside a repository is hidden and never committed', async () => {
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', args, {
        cwd,
        env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
        encoding: 'utf8',
      });
    const [status, diff, commit] = createGitTools({
      intents: createMemoryIntentStore(),
      protectedPaths,
      env: { PATH: process.env.PATH, HOME: root },
    }) as [ToolImplementation, ToolImplementation, ToolImplementation];
    const inside = join(dataDir, 'repo');
    mkdirSync(inside);
    git(inside, 'init', '-q');
    expect(await status.resolveScope({ repo: inside })).toMatch(/^kernel\.data_dir:/);
    expect((await aivyxFailure(status.run({ repo: inside }, toolContext({ held: trusted })))).kind).toBe('CapabilityDenied');

    // The user's home is a repository that holds the data directory.
    git(home, 'init', '-q');
    git(home, 'config', 'user.name', 'T');
    git(home, 'config', 'user.email', 't@example.com');
    writeFileSync(join(home, 'todo.txt'), 'x\n');
    const s = await status.run({ repo: home }, toolContext({ held: trusted }));
    const paths = s.kind === 'completed' ? (s.output as { entries: { path: string }[] }).entries.map((e) => e.path) : [];
    expect(paths).toContain('todo.txt');
    // The workspace inside the data directory is reachable (also by name); nothing else of the data directory is shown.
    expect(paths).toContain('.aivyx/workspace/notes.txt');
    expect(paths.filter((p) => p.startsWith('.aivyx') && !p.startsWith('.aivyx/workspace/'))).toEqual([]);
    git(home, 'add', '-f', '.aivyx/rest-token');
    const e = await aivyxFailure(commit.run({ repo: home, message: 'steal' }, toolContext({ held: trusted })));
    expect(e.kind).toBe('CapabilityDenied');
    expect(e.message).toContain('.aivyx/rest-token');
    expect((await aivyxFailure(diff.run({ repo: home, staged: true }, toolContext({ held: trusted })))).kind).toBe('CapabilityDenied');
    expect((await aivyxFailure(commit.run({ repo: home, message: 'steal', paths: ['.aivyx'] }, toolContext({ held: trusted })))).kind).toBe(
      'CapabilityDenied',
    );
    git(home, 'rm', '-q', '--cached', '.aivyx/rest-token');
    expect(await commit.run({ repo: home, message: 'todo', paths: ['todo.txt'] }, toolContext({ held: trusted }))).toMatchObject({
      kind: 'completed',
    });
    expect(git(home, 'ls-files')).toBe('todo.txt\n');
  });
});
