/** `shell.spawn` against real processes: supervision, heartbeats, process-group kills, caps, at-most-once. */
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createMemoryIntentStore,
  createShellSpawnTool,
  headTailBuffer,
  type ShellSpawnOutput,
  type ShellSpawnProgress,
} from '../../activities/tools/index.js';
import { parseShellExecInput } from '../../core/tools/shell-exec.js';
import { parseShellSpawnInput, shellSpawnTool, SPAWN_MAX_DURATION_MS } from '../../core/tools/shell-spawn.js';
import { aivyxFailure, errorKindOf } from '../support/aivyx-failure.js';
import { toolContext } from '../support/tool-context.js';
import { isAlive } from '../support/processes.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-spawn-')));
const node = process.execPath;

const alive = isAlive;

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

/** A node script as argv: `node -e <src>` (node is on PATH via its own directory). */
function nodeArgv(src: string): string[] {
  return ['node', '-e', src];
}

describe('shell.spawn input', () => {
  it("shares shell.exec's argv rules and has its own scope base", () => {
    expect(shellSpawnTool.requiredScope({ argv: ['sleep', '30'] })).toBe('shell.spawn:sleep');
    expect(shellSpawnTool.requiredScope({ argv: ['npm', 'run', 'dev'] })).toBe('shell.spawn:npm run dev');
    // An argv that runs its arguments needs the bare base (core/tools/shell-argv.ts).
    expect(shellSpawnTool.requiredScope({ argv: ['git', '-c', 'core.pager=sh', 'log'], cwd: '/repo/../repo', maxDurationMs: 1000 })).toBe(
      'shell.spawn',
    );
    expect(parseShellSpawnInput({ argv: ['ls'], cwd: '/a/./b/../c' })).toEqual({ argv: ['ls'], cwd: '/a/c' });
    for (const bad of [
      { argv: [] },
      { argv: 'sleep 30' },
      { argv: ['/bin/sleep', '1'] },
      { argv: ['./x'] },
      { argv: ['sleep;id'] },
      { argv: ['-rf'] },
      { argv: ['echo', 'a\0b'] },
      { argv: ['ls'], cwd: 'rel' },
      { argv: ['ls'], timeoutMs: 5 },
    ]) {
      expect(
        errorKindOf(() => shellSpawnTool.requiredScope(bad)),
        JSON.stringify(bad),
      ).toBe('InvalidScope');
      // The same rules, from the same function, for shell.exec (its own fields aside).
      if (!('timeoutMs' in bad))
        expect(
          errorKindOf(() => parseShellExecInput(bad)),
          JSON.stringify(bad),
        ).toBe('InvalidScope');
    }
    expect(errorKindOf(() => parseShellSpawnInput({ argv: ['ls'], maxDurationMs: SPAWN_MAX_DURATION_MS + 1 }))).toBe('InvalidScope');
    expect(errorKindOf(() => parseShellSpawnInput({ argv: ['ls'], maxDurationMs: 0 }))).toBe('InvalidScope');
  });
});

describe('headTailBuffer', () => {
  it('keeps everything under the cap, and head + tail (on UTF-8 boundaries) over it', () => {
    const small = headTailBuffer(10);
    small.push(Buffer.from('abc'));
    small.push(Buffer.from('def'));
    expect([small.text(), small.bytes(), small.truncated()]).toEqual(['abcdef', 6, false]);

    const big = headTailBuffer(8);
    for (const c of ['0123', '4567', '89ab', 'cdef']) big.push(Buffer.from(c));
    expect(big.bytes()).toBe(16);
    expect(big.truncated()).toBe(true);
    expect(big.text()).toBe('0123\n[… 8 bytes omitted …]\ncdef');

    // 12 bytes, cap 8: the head's 4th byte and the tail's 1st byte are halves of an "é".
    const utf = headTailBuffer(8);
    utf.push(Buffer.from('aéééééb'));
    expect(utf.text()).toBe('aé\n[… 6 bytes omitted …]\néb');
  });
});

describe('shell.spawn', () => {
  const intents = createMemoryIntentStore();
  const tool = createShellSpawnTool({
    intents,
    env: { PATH: `${join(node, '..')}:${process.env.PATH ?? ''}`, HOME: root, LANG: 'C', AIVYX_SECRET: 'hunter2' },
    heartbeatMs: 200,
    killGraceMs: 500,
  });
  const out = async (input: unknown, c = toolContext()): Promise<ShellSpawnOutput> => {
    const r = await tool.run(input, c);
    if (r.kind !== 'completed') throw new Error('expected completed');
    expect(r.verified).toBe('Unverified');
    return r.output as ShellSpawnOutput;
  };

  it('runs the program until it exits, heartbeating pid, output bytes and elapsed time', async () => {
    const beats: ShellSpawnProgress[] = [];
    const c = toolContext({ heartbeat: (d) => void beats.push(d as ShellSpawnProgress) });
    const o = await out(
      { argv: nodeArgv('let i=0; const t=setInterval(()=>{console.log("tick "+(++i)); if(i===4){clearInterval(t)}},250)') },
      c,
    );
    expect(o).toMatchObject({
      exitCode: 0,
      signal: null,
      stdout: 'tick 1\ntick 2\ntick 3\ntick 4\n',
      stderr: '',
      stdoutBytes: 28,
      truncated: false,
      timedOut: false,
    });
    expect(o.durationMs).toBeGreaterThanOrEqual(900);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats.every((b) => b.tool === 'shell.spawn' && b.pid === o.pid)).toBe(true);
    expect(beats.at(-1)?.elapsedMs).toBeGreaterThan(beats[0]?.elapsedMs ?? Infinity);
    expect(Math.max(...beats.map((b) => b.stdoutBytes))).toBeGreaterThan(0);
    expect(intents.get(c.idemKey)).toMatchObject({
      tool: 'shell.spawn',
      state: 'finished',
      outcome: expect.stringMatching(/^exit 0 after \d+ ms \(pid \d+\)$/),
    });
  });

  it('passes argv literally, scrubs the environment and refuses a missing cwd before claiming the intent', async () => {
    expect((await out({ argv: ['echo', '$(id)', ';', '*'] })).stdout).toBe('$(id) ; *\n');
    const env = await out({ argv: ['env'] });
    expect(env.stdout).not.toContain('hunter2');
    expect(
      env.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('=')[0])
        .sort(),
    ).toEqual(['HOME', 'LANG', 'PATH']);
    expect((await out({ argv: ['pwd'] })).stdout).toBe(`${root}\n`);
    const c = toolContext();
    expect((await aivyxFailure(tool.run({ argv: ['pwd'], cwd: join(root, 'nope') }, c))).message).toMatch(/does not exist/);
    expect(intents.get(c.idemKey)).toBeUndefined();
    expect((await aivyxFailure(tool.run({ argv: ['no-such-command-aivyx'] }, toolContext()))).message).toMatch(/command not found/);
  });

  it('keeps the head and tail of a long output within the cap', async () => {
    const capped = createShellSpawnTool({ intents, outputCapBytes: 1024 });
    const r = await capped.run({ argv: nodeArgv('process.stdout.write("START" + "x".repeat(100000) + "END")') }, toolContext());
    const o = (r as { output: ShellSpawnOutput }).output;
    expect(o.stdoutBytes).toBe(100_008);
    expect(o.truncated).toBe(true);
    expect(o.stdout.startsWith('STARTxxx')).toBe(true);
    expect(o.stdout.endsWith('xxxEND')).toBe(true);
    expect(o.stdout).toMatch(/\[… 98984 bytes omitted …\]/);
  });

  it('terminates the whole process group at maxDurationMs (SIGTERM, then SIGKILL for what ignores it)', async () => {
    const pidFile = join(root, 'stubborn.pid');
    // The child ignores SIGTERM and leaves a grandchild behind: both must be gone afterwards.
    const src = `process.on("SIGTERM",()=>{}); const c=require("child_process").spawn("sleep",["60"],{stdio:"ignore"}); require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)); setInterval(()=>{},1000)`;
    const t = Date.now();
    const o = await out({ argv: nodeArgv(src), maxDurationMs: 800 });
    expect(Date.now() - t).toBeLessThan(5_000);
    expect(o).toMatchObject({ timedOut: true, signal: 'SIGKILL', exitCode: null });
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(await waitFor(() => !alive(grandchild), 2_000)).toBe(true);
    expect(alive(o.pid)).toBe(false);
  });

  it('kills the process group when the call is cancelled, and says so', async () => {
    const pidFile = join(root, 'cancel.pid');
    const ac = new AbortController();
    const c = toolContext({ signal: ac.signal });
    const src = `const c=require("child_process").spawn("sleep",["60"],{stdio:"ignore"}); require("fs").writeFileSync(${JSON.stringify(pidFile)}, process.pid+" "+c.pid); setInterval(()=>{},1000)`;
    const running = tool.run({ argv: nodeArgv(src) }, c);
    expect(await waitFor(() => existsSync(pidFile), 5_000)).toBe(true);
    ac.abort(new Error('turn cancelled by test'));
    const e = await aivyxFailure(running);
    expect(e.kind).toBe('Cancelled');
    expect(e.message).toMatch(/turn cancelled by test.*process group .* was killed/);
    const [leader, grandchild] = readFileSync(pidFile, 'utf8').split(' ').map(Number) as [number, number];
    expect(await waitFor(() => !alive(leader) && !alive(grandchild), 2_000)).toBe(true);
    expect(intents.get(c.idemKey)).toMatchObject({ state: 'finished', outcome: expect.stringMatching(/cancelled/) });
  });

  it('kills what is left of the group when the leader exits', async () => {
    const pidFile = join(root, 'leftover.pid');
    const src = `const c=require("child_process").spawn("sleep",["60"],{stdio:"ignore"}); c.unref(); require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(c.pid))`;
    const o = await out({ argv: nodeArgv(src) });
    expect(o.exitCode).toBe(0);
    const leftover = Number(readFileSync(pidFile, 'utf8'));
    expect(await waitFor(() => !alive(leftover), 2_000)).toBe(true);
  });

  it('is at-most-once: a retry that finds the intent claimed does not spawn and says the result is unknown', async () => {
    const crashed = toolContext();
    await intents.begin(crashed.idemKey, { tool: 'shell.spawn', inputHash: 'x' });
    const marker = join(root, 'not-spawned');
    const e = await aivyxFailure(tool.run({ argv: ['touch', marker] }, crashed));
    expect(e.kind).toBe('Tool');
    expect(e.message).toBe("shell.spawn was interrupted and is not re-run (at-most-once): the earlier attempt's result is unknown");
    expect(e.detail).toMatchObject({ tool: 'shell.spawn', atMostOnce: true, resultUnknown: true });
    expect(existsSync(marker)).toBe(false);
  });

  it('does not spawn when already cancelled', async () => {
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    const c = toolContext({ signal: ac.signal });
    await expect(tool.run({ argv: ['true'] }, c)).rejects.toThrow('gone');
    expect(intents.get(c.idemKey)).toBeUndefined();
  });
});
