/** fs.delete and fs.metadata against the real filesystem (no mocks), including the symlink-escape corpus. */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFsDeleteTool, createFsMetadataTool } from '../../activities/tools/index.js';
import { CapabilitySet, Scope } from '../../core/capability/index.js';
import { fsDeleteTool } from '../../core/tools/fs-delete.js';
import { fsMetadataTool } from '../../core/tools/fs-metadata.js';
import type { ToolDescriptor } from '../../core/tools.js';

const FS_EXTRA_TOOLS: ToolDescriptor[] = [fsDeleteTool, fsMetadataTool];
import { parseFsDeleteInput } from '../../core/tools/fs-delete.js';
import { toolContext } from '../support/tool-context.js';
import { aivyxFailure, errorKindOf } from '../support/aivyx-failure.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-fsx-')));
/** The turn's grants the tools re-check what they opened against (runTool hands them the effective set). */
const HOST_GRANTS = ['fs.delete', 'fs.metadata'];

/** What the activity does: the declared and the resolved scope must both be granted. */
async function allowed(
  tool: { descriptor: { requiredScope(i: unknown): string }; resolveScope(i: unknown): Promise<string> },
  input: unknown,
  held: string[],
): Promise<boolean> {
  const set = CapabilitySet.from(held);
  const declared = Scope.parse(tool.descriptor.requiredScope(input)).toString();
  const resolved = Scope.parse(await tool.resolveScope(input)).toString();
  return set.grants(declared) && set.grants(resolved);
}

describe('descriptors', () => {
  it('derive lexically normalized path scopes', () => {
    const [del, meta] = FS_EXTRA_TOOLS as [(typeof FS_EXTRA_TOOLS)[0], (typeof FS_EXTRA_TOOLS)[0]];
    expect(FS_EXTRA_TOOLS.map((t) => [t.id, t.idempotency])).toEqual([
      ['fs.delete', 'natural'],
      ['fs.metadata', 'natural'],
    ]);
    expect(del.requiredScope({ path: '/home/u/./a//b/../c.txt' })).toBe('fs.delete:/home/u/a/c.txt');
    expect(meta.requiredScope({ path: '/home/u/x/' })).toBe('fs.metadata:/home/u/x');
    expect(parseFsDeleteInput({ path: '/tmp/x' })).toEqual({ path: '/tmp/x', recursive: false });
  });

  it('refuse traversal above /, relative paths, "/" itself, NUL bytes and unknown fields at parse', () => {
    const [del, meta] = FS_EXTRA_TOOLS as [(typeof FS_EXTRA_TOOLS)[0], (typeof FS_EXTRA_TOOLS)[0]];
    for (const bad of [
      { path: '/../etc/passwd' },
      { path: 'etc/passwd' },
      { path: '/' },
      { path: '/a/../..' },
      { path: '/tmp/\0x' },
      { path: '/tmp/x', recursive: 'yes' },
      { path: '/tmp/x', force: true },
      { path: '' },
      null,
      [],
    ]) {
      expect(errorKindOf(() => del.requiredScope(bad))).toBe('InvalidScope');
    }
    expect(errorKindOf(() => meta.requiredScope({ path: '/../x' }))).toBe('InvalidScope');
    expect(errorKindOf(() => meta.requiredScope({ path: '/' }))).toBeUndefined();
  });

  it('a lexical ".." cannot climb out of a granted tree', () => {
    const held = CapabilitySet.from(['fs.delete:/home/u/tmp/**']);
    const del = FS_EXTRA_TOOLS[0] as (typeof FS_EXTRA_TOOLS)[0];
    expect(held.grants(del.requiredScope({ path: '/home/u/tmp/x/../y' }))).toBe(true);
    expect(held.grants(del.requiredScope({ path: '/home/u/tmp/../.ssh/id_ed25519' }))).toBe(false);
    // For fs.delete `**` never matches its own root: deleting /home/u/tmp is not "something under it".
    expect(held.grants(del.requiredScope({ path: '/home/u/tmp' }))).toBe(false);
    expect(held.grants(del.requiredScope({ path: '/home/u/tmpx' }))).toBe(false);
  });
});

describe('fs.delete', () => {
  const tool = createFsDeleteTool({ home: join(root, 'home') });
  mkdirSync(join(root, 'home'));

  it('deletes a file, verified by absence, and is idempotent (existed:false the second time)', async () => {
    const path = join(root, 'd1.txt');
    writeFileSync(path, 'x');
    expect(await tool.run({ path }, toolContext({ held: HOST_GRANTS }))).toEqual({
      kind: 'completed',
      verified: 'Verified',
      output: { path, existed: true, type: 'file' },
    });
    expect(existsSync(path)).toBe(false);
    expect(await tool.run({ path }, toolContext({ held: HOST_GRANTS }))).toEqual({
      kind: 'completed',
      verified: 'Verified',
      output: { path, existed: false },
    });
    // Absent parent too: nothing to do.
    expect(await tool.run({ path: join(root, 'no/such/dir/f') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { existed: false },
    });
  });

  it('removes an empty directory, refuses a non-empty one unless recursive', async () => {
    mkdirSync(join(root, 'empty'));
    expect(await tool.run({ path: join(root, 'empty') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { type: 'directory' },
    });
    mkdirSync(join(root, 'tree/sub'), { recursive: true });
    writeFileSync(join(root, 'tree/sub/f'), 'x');
    const e = await aivyxFailure(tool.run({ path: join(root, 'tree') }, toolContext({ held: HOST_GRANTS })));
    expect(e).toMatchObject({ kind: 'Tool', detail: { tool: 'fs.delete' } });
    expect(e.message).toMatch(/non-empty directory/);
    expect(e.hint).toMatch(/recursive:true/);
    expect(existsSync(join(root, 'tree/sub/f'))).toBe(true);
    expect(await tool.run({ path: join(root, 'tree'), recursive: true }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { existed: true, type: 'directory' },
    });
    expect(existsSync(join(root, 'tree'))).toBe(false);
  });

  it('deletes a symlink itself, never its target, and a recursive delete does not follow inner links', async () => {
    const target = join(root, 'keep.txt');
    writeFileSync(target, 'precious');
    symlinkSync(target, join(root, 'link'));
    expect(await tool.run({ path: join(root, 'link') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { path: join(root, 'link'), type: 'symlink' },
    });
    expect(readFileSync(target, 'utf8')).toBe('precious');

    mkdirSync(join(root, 'outside-keep'));
    writeFileSync(join(root, 'outside-keep/f'), 'keep');
    mkdirSync(join(root, 'withlink'));
    symlinkSync(join(root, 'outside-keep'), join(root, 'withlink/escape'));
    await tool.run({ path: join(root, 'withlink'), recursive: true }, toolContext({ held: HOST_GRANTS }));
    expect(readFileSync(join(root, 'outside-keep/f'), 'utf8')).toBe('keep');
  });

  it('refuses the home directory itself (also through a symlink to it), but not what is inside it', async () => {
    const e = await aivyxFailure(tool.run({ path: join(root, 'home') }, toolContext({ held: HOST_GRANTS })));
    expect(e.message).toMatch(/home directory/);
    // Reached through a symlinked parent, it is still the home directory.
    symlinkSync(root, join(root, 'alias'));
    expect((await aivyxFailure(tool.run({ path: join(root, 'alias/home') }, toolContext({ held: HOST_GRANTS })))).message).toMatch(
      /home directory/,
    );
    // A link TO home is just a link: ".." is resolved lexically first, so "home-link/x/.." is the link, which may go.
    symlinkSync(join(root, 'home'), join(root, 'home-link'));
    expect(await tool.run({ path: join(root, 'home-link/x/..') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { type: 'symlink' },
    });
    writeFileSync(join(root, 'home/f'), 'x');
    expect(await tool.run({ path: join(root, 'home/f') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({ verified: 'Verified' });
    expect(existsSync(join(root, 'home'))).toBe(true);
  });

  it('resolveScope follows symlinked parents: deleting through a link out of the granted tree is denied', async () => {
    mkdirSync(join(root, 'granted'));
    mkdirSync(join(root, 'secret'));
    writeFileSync(join(root, 'secret/key'), 'k');
    symlinkSync(join(root, 'secret'), join(root, 'granted/door'));
    const input = { path: join(root, 'granted/door/key') };
    expect(tool.descriptor.requiredScope(input)).toBe(`fs.delete:${root}/granted/door/key`);
    expect(await tool.resolveScope(input)).toBe(`fs.delete:${root}/secret/key`);
    expect(await allowed(tool, input, [`fs.delete:${root}/granted/**`])).toBe(false);
    // The link itself lies in the granted tree.
    expect(await allowed(tool, { path: join(root, 'granted/door') }, [`fs.delete:${root}/granted/**`])).toBe(true);
  });

  it('reports a permission problem as a Tool error and leaves the file', async () => {
    if (process.getuid?.() === 0) return; // root ignores directory permissions
    mkdirSync(join(root, 'locked'));
    writeFileSync(join(root, 'locked/f'), 'x');
    chmodSync(join(root, 'locked'), 0o555);
    try {
      expect((await aivyxFailure(tool.run({ path: join(root, 'locked/f') }, toolContext({ held: HOST_GRANTS })))).message).toMatch(
        /permission denied/,
      );
      expect(existsSync(join(root, 'locked/f'))).toBe(true);
    } finally {
      chmodSync(join(root, 'locked'), 0o755);
    }
  });
});

describe('fs.metadata', () => {
  const tool = createFsMetadataTool();

  it('describes files and directories without reading them (NotApplicable)', async () => {
    const path = join(root, 'm.txt');
    writeFileSync(path, 'hello');
    chmodSync(path, 0o640);
    const r = await tool.run({ path }, toolContext({ held: HOST_GRANTS }));
    expect(r).toEqual({
      kind: 'completed',
      verified: 'NotApplicable',
      output: { path, exists: true, type: 'file', size: 5, mode: '640', mtime: lstatSync(path).mtime.toISOString(), realPath: path },
    });
    expect(await tool.run({ path: root }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      output: { type: 'directory', realPath: root },
    });
    expect(await tool.run({ path: join(root, 'absent') }, toolContext({ held: HOST_GRANTS }))).toEqual({
      kind: 'completed',
      verified: 'NotApplicable',
      output: { path: join(root, 'absent'), exists: false },
    });
  });

  it('describes a symlink as a symlink, names its real target, and reports a dangling one', async () => {
    writeFileSync(join(root, 'mt.txt'), 'abc');
    symlinkSync(join(root, 'mt.txt'), join(root, 'ml'));
    expect(await tool.run({ path: join(root, 'ml') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      output: { type: 'symlink', realPath: join(root, 'mt.txt'), target: { type: 'file', size: 3 } },
    });
    symlinkSync(join(root, 'gone'), join(root, 'mdangling'));
    expect(await tool.run({ path: join(root, 'mdangling') }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      output: { type: 'symlink', realPath: join(root, 'mdangling'), target: null },
    });
  });

  it('a symlink escaping the granted tree needs the grant for its target', async () => {
    mkdirSync(join(root, 'mg'));
    mkdirSync(join(root, 'mout'));
    writeFileSync(join(root, 'mout/s'), 's');
    symlinkSync(join(root, 'mout/s'), join(root, 'mg/innocent'));
    const input = { path: join(root, 'mg/innocent') };
    expect(await tool.resolveScope(input)).toBe(`fs.metadata:${root}/mout/s`);
    expect(await allowed(tool, input, [`fs.metadata:${root}/mg/**`])).toBe(false);
    expect(await allowed(tool, input, [`fs.metadata:${root}/mg/**`, `fs.metadata:${root}/mout/**`])).toBe(true);
  });
});
