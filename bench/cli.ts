/**
 * The CLI as a person meets it, as whole processes: `aivyx --help`, and `aivyx chat -m hello` against
 * a running `aivyx up` (the compiled CLI, app/bin.js, on a data directory of its own with the offline
 * demo model). The turn's own time is what chat prints (`[Completed · … · N ms]`); the rest of the
 * wall time is the process: start, connect, stream, exit.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBuildFresh } from '../app/build-state.js';
import { freePort } from '../infra/temporal/free-port.js';
import { median } from './stats.js';

/** What `benchCli` measured (medians, ms). */
export interface CliFigures {
  help: number;
  chatWall: number;
  chatTurn: number;
}

function timed(args: string[], env: NodeJS.ProcessEnv, root: string): { ms: number; stdout: string; stderr: string } {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['app/bin.js', ...args], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`aivyx ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `--help` and `chat -m hello` `runs` times each (after one warm-up) and returns the medians. */
export async function benchCli(root: string, runs: number): Promise<CliFigures> {
  if (!isBuildFresh(root)) throw new Error('dist/ is not fresh: run npm run build (the bootstrap does) before the benchmark');
  const home = mkdtempSync(join(tmpdir(), 'aivyx-bench-cli-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AIVYX_HOME: home,
    AIVYX_PASSPHRASE: 'bench passphrase',
    AIVYX_TEMPORAL_PORT: String(await freePort()),
    AIVYX_UI_PORT: String(await freePort()),
    AIVYX_REST_PORT: String(await freePort()),
    AIVYX_CODEC_PORT: String(await freePort()),
  };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'AIVYX_LLM']) delete env[k];

  const help: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const r = timed(['--help'], env, root);
    if (i > 0) help.push(r.ms);
  }

  const up = spawn(process.execPath, ['app/bin.js', 'up'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  up.stdout.on('data', (d: Buffer) => (out += d.toString()));
  up.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    for (const end = Date.now() + 180_000; !out.includes('aivyx is up');) {
      if (Date.now() > end || up.exitCode !== null) throw new Error(`aivyx up did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall: number[] = [];
    const turn: number[] = [];
    for (let i = 0; i <= runs; i++) {
      const r = timed(['chat', '-m', 'hello'], env, root);
      const ms = /\[Completed · (?:no tool ran|\d+ tool call\(s\))[^·\]]* · (\d+) ms[\] ·]/.exec(r.stderr)?.[1];
      if (ms === undefined) throw new Error(`chat printed no turn time: ${r.stderr}`);
      if (i > 0) {
        wall.push(r.ms);
        turn.push(Number(ms));
      }
    }
    return { help: median(help), chatWall: median(wall), chatTurn: median(turn) };
  } finally {
    up.kill('SIGINT');
    await new Promise((r) => up.once('exit', r));
  }
}
