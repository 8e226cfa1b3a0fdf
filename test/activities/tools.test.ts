/** The starter tools against the real filesystem and real processes (no mocks). */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createFsReadTool,
  createFsWriteTool,
  createMemoryIntentStore,
  createShellExecTool,
  createStarterTools,
  type ShellExecOutput,
} from '../../activities/tools/index.js';
import { aivyxFailure } from '../support/aivyx-failure.js';

/** The turn's grants the tools re-check what they opened against (runTool hands them the effective set). */
const HOST_GRANTS = ['fs.read', 'fs.write'];
import { toolContext } from '../support/tool-context.js';

// realpath: on some systems the temp dir itself sits behind a symlink.
const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-tools-')));

describe('fs.write', () => {
  const tool = createFsWriteTool();

  it('writes atomically and verifies by reading back', async () => {
    const path = join(root, 'w1.txt');
    const r = await tool.run({ path, content: 'héllo\n' }, toolContext({ held: HOST_GRANTS }));
    expect(r).toEqual({
      kind: 'completed',
      verified: 'Verified',
      output: expect.objectContaining({ path, bytes: 7, created: true, changed: true }),
    });
    expect(readFileSync(path, 'utf8')).toBe('héllo\n');
    // No temp file is left beside it.
    expect(readdirSync(root).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('is naturally idempotent and keeps the permission bits of the file it replaces', async () => {
    const path = join(root, 'secret.txt');
    writeFileSync(path, 'old');
    chmodSync(path, 0o600);
    await tool.run({ path, content: 'new' }, toolContext({ held: HOST_GRANTS }));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = await tool.run({ path, content: 'new' }, toolContext({ held: HOST_GRANTS }));
    expect(again).toMatchObject({ kind: 'completed', verified: 'Verified', output: { changed: false, created: false } });
  });

  it('mode "create" accepts identical content (a retry) but refuses different content', async () => {
    const path = join(root, 'created.txt');
    expect(await tool.run({ path, content: 'one', mode: 'create' }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { created: true },
    });
    expect(await tool.run({ path, content: 'one', mode: 'create' }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      verified: 'Verified',
      output: { changed: false },
    });
    const e = await aivyxFailure(tool.run({ path, content: 'two', mode: 'create' }, toolContext({ held: HOST_GRANTS })));
    expect(e.kind).toBe('Tool');
    expect(e.message).toMatch(/already exists with different content/);
    expect(e.detail).toEqual({ tool: 'fs.write' });
    expect(readFileSync(path, 'utf8')).toBe('one');
  });

  it('creates missing parent directories and writes through a symlinked directory to its real path', async () => {
    const path = join(root, 'deep/er/file.txt');
    await tool.run({ path, content: 'x' }, toolContext({ held: HOST_GRANTS }));
    expect(readFileSync(path, 'utf8')).toBe('x');

    const outside = join(root, 'outside-w');
    mkdirSync(outside);
    symlinkSync(outside, join(root, 'granted-w'));
    expect(await tool.resolveScope({ path: join(root, 'granted-w/new/f.txt'), content: '' })).toBe(`fs.write:${outside}/new/f.txt`);
  });

  it('refuses a dangling symlink and a directory target', async () => {
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
    expect((await aivyxFailure(tool.resolveScope({ path: join(root, 'dangling'), content: '' }))).kind).toBe('Tool');
    expect((await aivyxFailure(tool.run({ path: root, content: 'x' }, toolContext({ held: HOST_GRANTS })))).kind).toBe('Tool');
  });
});

describe('fs.read', () => {
  const tool = createFsReadTool();

  it('reads whole files and truncates at maxBytes, never inside a UTF-8 character', async () => {
    const path = join(root, 'r.txt');
    writeFileSync(path, 'hello world');
    expect(await tool.run({ path }, toolContext({ held: HOST_GRANTS }))).toEqual({
      kind: 'completed',
      verified: 'NotApplicable',
      output: { path, content: 'hello world', bytes: 11, truncated: false },
    });
    expect(await tool.run({ path, maxBytes: 5 }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      output: { content: 'hello', bytes: 5, truncated: true },
    });
    expect(await tool.run({ path, maxBytes: 11 }, toolContext({ held: HOST_GRANTS }))).toMatchObject({ output: { truncated: false } });

    const utf = join(root, 'utf.txt');
    writeFileSync(utf, 'h€llo'); // € is 3 bytes
    expect(await tool.run({ path: utf, maxBytes: 3 }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      output: { content: 'h', bytes: 1, truncated: true },
    });
  });

  it('clamps maxBytes to the tool ceiling', async () => {
    const path = join(root, 'big.txt');
    writeFileSync(path, 'x'.repeat(100));
    const small = createFsReadTool({ maxBytesLimit: 10 });
    expect(await small.run({ path, maxBytes: 50 }, toolContext({ held: HOST_GRANTS }))).toMatchObject({
      output: { bytes: 10, truncated: true },
    });
  });

  it('resolveScope returns the real target of a symlink, so an escape is visible to the re-check', async () => {
    const secret = join(root, 'outside-r', 'secret.txt');
    mkdirSync(join(root, 'outside-r'));
    writeFileSync(secret, 's3cret');
    mkdirSync(join(root, 'granted-r'));
    symlinkSync(secret, join(root, 'granted-r', 'innocent.txt'));
    const input = { path: join(root, 'granted-r', 'innocent.txt') };
    expect(createFsReadTool().descriptor.requiredScope(input)).toBe(`fs.read:${root}/granted-r/innocent.txt`);
    expect(await tool.resolveScope(input)).toBe(`fs.read:${secret}`);
  });

  it('fails with Tool errors naming the tool', async () => {
    const missing = await aivyxFailure(tool.run({ path: join(root, 'missing.txt') }, toolContext({ held: HOST_GRANTS })));
    expect(missing).toMatchObject({ kind: 'Tool', detail: { tool: 'fs.read' } });
    expect(missing.message).toMatch(/no such file/);
    expect((await aivyxFailure(tool.run({ path: root }, toolContext({ held: HOST_GRANTS })))).message).toMatch(/not a regular file/);
    expect((await aivyxFailure(tool.resolveScope({ path: 'relative' }))).kind).toBe('InvalidScope');
  });
});

describe('shell.exec', () => {
  const intents = createMemoryIntentStore();
  const tool = createShellExecTool({ intents, env: { PATH: process.env.PATH, HOME: root, LANG: 'C', AIVYX_SECRET: 'hunter2' } });
  const out = async (input: unknown, c = toolContext({ held: HOST_GRANTS })): Promise<ShellExecOutput> => {
    const r = await tool.run(input, c);
    if (r.kind !== 'completed') throw new Error('expected completed');
    expect(r.verified).toBe('Unverified');
    return r.output as ShellExecOutput;
  };

  it('passes argv literally: no shell interprets quotes, $(), ; or globs', async () => {
    const o = await out({ argv: ['echo', '$(id)', ';', 'ls', '*', '`whoami`', '&&', 'true'] });
    expect(o).toEqual({
      exitCode: 0,
      signal: null,
      stdout: '$(id) ; ls * `whoami` && true\n',
      stderr: '',
      truncated: false,
      timedOut: false,
    });
    expect((await out({ argv: ['sh', '-c', 'exit 3'] })).exitCode).toBe(3);
  });

  it('scrubs the environment to PATH, HOME and LANG', async () => {
    const o = await out({ argv: ['env'] });
    expect(o.stdout).not.toContain('hunter2');
    expect(
      o.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('=')[0])
        .sort(),
    ).toEqual(['HOME', 'LANG', 'PATH']);
  });

  it('runs in cwd (default HOME) and refuses a missing cwd before claiming the intent', async () => {
    expect((await out({ argv: ['pwd'] })).stdout).toBe(`${root}\n`);
    expect((await out({ argv: ['pwd'], cwd: '/' })).stdout).toBe('/\n');
    const c = toolContext({ held: HOST_GRANTS });
    expect((await aivyxFailure(tool.run({ argv: ['pwd'], cwd: join(root, 'nope') }, c))).message).toMatch(/does not exist/);
    expect(intents.get(c.idemKey)).toBeUndefined();
  });

  it('caps stdout at 64 KiB and says so', async () => {
    const o = await out({ argv: ['head', '-c', '300000', '/dev/zero'] });
    expect(o.stdout.length).toBe(64 * 1024);
    expect(o.truncated).toBe(true);
    expect(o.exitCode).toBe(0);
  });

  it('kills the command (and its process group) at the timeout', async () => {
    const t = Date.now();
    const o = await out({ argv: ['sh', '-c', 'sleep 30 & sleep 30'], timeoutMs: 300 });
    expect(Date.now() - t).toBeLessThan(5_000);
    expect(o).toMatchObject({ timedOut: true, signal: 'SIGKILL', exitCode: null });
  });

  it('heartbeats while running and stops promptly when cancelled', async () => {
    const ac = new AbortController();
    let beats = 0;
    const c = toolContext({ signal: ac.signal, heartbeat: () => void beats++ });
    setTimeout(() => ac.abort(new Error('cancelled by test')), 1_300);
    const t = Date.now();
    await expect(tool.run({ argv: ['sleep', '30'] }, c)).rejects.toThrow('cancelled by test');
    expect(Date.now() - t).toBeLessThan(5_000);
    expect(beats).toBeGreaterThanOrEqual(1);
    expect(intents.get(c.idemKey)).toMatchObject({ state: 'finished', outcome: 'cancelled (SIGKILL)' });
  });

  it('is at-most-once: an attempt that finds its intent already claimed does not run again', async () => {
    const marker = join(root, 'marker');
    const c = toolContext({ held: HOST_GRANTS });
    await out({ argv: ['touch', marker] }, c);
    expect(intents.get(c.idemKey)).toMatchObject({
      tool: 'shell.exec',
      state: 'finished',
      outcome: 'exit 0',
      inputHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    // A retry after a crash: the first attempt claimed the intent, then the worker died.
    const crashed = toolContext({ held: HOST_GRANTS });
    await intents.begin(crashed.idemKey, { tool: 'shell.exec', inputHash: 'x' });
    const second = join(root, 'second-marker');
    const e = await aivyxFailure(tool.run({ argv: ['touch', second] }, crashed));
    expect(e.kind).toBe('Tool');
    expect(e.message).toBe('shell.exec was interrupted and is not re-run (at-most-once); check whether it took effect');
    expect(e.detail).toMatchObject({ tool: 'shell.exec', atMostOnce: true });
    expect(existsSync(second)).toBe(false);

    // The same key again (a retry after success) is refused too.
    expect((await aivyxFailure(tool.run({ argv: ['touch', marker] }, c))).message).toMatch(/at-most-once/);
  });

  it('reports a missing command as a Tool error', async () => {
    const e = await aivyxFailure(tool.run({ argv: ['no-such-command-aivyx'] }, toolContext({ held: HOST_GRANTS })));
    expect(e.kind).toBe('Tool');
    expect(e.message).toMatch(/command not found/);
  });
});

describe('createStarterTools', () => {
  it('builds the catalog tools in order', () => {
    expect(createStarterTools({ intents: createMemoryIntentStore() }).map((t) => t.descriptor.id)).toEqual([
      'fs.read',
      'fs.write',
      'shell.exec',
      'fs.delete',
      'fs.metadata',
      'net.fetch',
      'net.post',
    ]);
  });
});
