/**
 * The compiled CLI (issue "speed"): `npm run build` compiles to dist/, and `aivyx` (app/bin.js, what
 * `npm start`, `npm run aivyx` and `npx aivyx` run) starts it in-process when dist/ is fresh. Proven
 * through real processes: help, then `up` — whose worker bundles the compiled workflows — and a
 * turn over its REST channel, then a wrong command's error. Timing is the benchmark's job.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBuildFresh } from '../../app/build-state.js';
import { cliEnv } from '../support/cli-process.js';

const root = process.cwd();
const home = mkdtempSync(join(tmpdir(), 'aivyx-compiled-'));
const script = join(home, 'script.json');
writeFileSync(script, JSON.stringify({ rules: [{ match: 'hello', steps: [{ say: 'Hello from the compiled aivyx!' }] }] }));

const bin = (args: string[], env: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, ['app/bin.js', ...args], { env, encoding: 'utf8', timeout: 120_000 });

let up: ReturnType<typeof spawn> | undefined;
beforeAll(() => {
  // npm test's bootstrap has built it; a developer running this file alone may not have.
  if (!isBuildFresh(root)) expect(spawnSync('npm', ['run', '--silent', 'build'], { encoding: 'utf8' }).status).toBe(0);
}, 180_000);
afterAll(() => {
  up?.kill('SIGKILL');
});

describe('the compiled aivyx', () => {
  it('runs from dist/: --help, up (bundling the compiled workflows), chat -m over REST, and a clear error', async () => {
    const env = await cliEnv(home, script);
    const help = bin(['--help'], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage:/);
    expect(help.stderr).not.toContain('running through tsx'); // the compiled entry point, not the fallback

    up = spawn(process.execPath, ['app/bin.js', 'up'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    up.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    up.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    for (const end = Date.now() + 150_000; !out.includes('aivyx is up');) {
      if (Date.now() > end || up.exitCode !== null) throw new Error(`aivyx up did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const chat = bin(['chat', '-m', 'hello'], env);
    expect(chat.stdout).toContain('Hello from the compiled aivyx!');
    expect(chat.stderr).toMatch(/\[Completed/);
    expect(chat.status).toBe(0);

    const wrong = bin(['mission', 'show'], env);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toMatch(/^aivyx: /);

    up.kill('SIGINT');
    expect(await new Promise((r) => up!.once('exit', r))).toBe(0);
  }, 300_000);
});
