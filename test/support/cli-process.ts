/** Driving the real `aivyx` command in child processes, as a person at a terminal would. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../infra/temporal/index.js';

/** `node` arguments that run `aivyx` from its sources through tsx (with this run's workflow bundles: aivyx-main.ts). */
const AIVYX_MAIN = ['--import', 'tsx', 'test/support/aivyx-main.ts'];

/** An environment for `aivyx` on the embedded defaults (PGlite, own dev server) on free ports. */
export async function cliEnv(home: string, script: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AIVYX_HOME: home,
    AIVYX_PASSPHRASE: 'e2e passphrase',
    AIVYX_LLM: `scripted:${script}`,
    AIVYX_TEMPORAL_PORT: String(await freePort()),
    AIVYX_UI_PORT: String(await freePort()),
    AIVYX_REST_PORT: String(await freePort()),
    AIVYX_CODEC_PORT: String(await freePort()),
    AIVYX_APP_PORT: String(await freePort()),
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  return env;
}

/** Runs `aivyx args` to completion (stdin from `input` when given). */
export function aivyx(args: string[], env: NodeJS.ProcessEnv, input?: string) {
  return spawnSync(process.execPath, [...AIVYX_MAIN, ...args], {
    env,
    encoding: 'utf8',
    timeout: 120_000,
    ...(input === undefined ? {} : { input }),
  });
}

/**
 * Runs `aivyx args` to completion without blocking this process (needed when this process itself
 * serves something the command uses, e.g. a proxy in front of PostgreSQL).
 */
export function aivyxAsync(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...AIVYX_MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => {
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A long-running `aivyx` process whose stdout and stderr are collected together. */
export interface AivyxProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves once the output contains `text` (or rejects after `timeoutMs`). */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
}

/** A word for `sh -c`, quoted. */
const shellWord = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * Spawns `aivyx args` (e.g. `up`, or the `chat` REPL) in the background. `pty`: on a pseudo-terminal
 * (util-linux `script`), as at a real keyboard; what the test writes is typed into it.
 */
export function spawnAivyx(args: string[], env: NodeJS.ProcessEnv, opts: { pty?: boolean } = {}): AivyxProcess {
  const argv = [process.execPath, ...AIVYX_MAIN, ...args];
  const child = opts.pty
    ? spawn('script', ['-qfec', argv.map(shellWord).join(' '), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(argv[0]!, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return {
    child,
    output: () => out,
    async waitFor(text, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (Date.now() > end) throw new Error(`"${text}" never appeared; output so far:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** Runs `aivyx args` until `ok(stdout)` or the deadline (visibility is eventually consistent). */
export async function untilAivyx(
  args: string[],
  env: NodeJS.ProcessEnv,
  ok: (stdout: string) => boolean,
  timeoutMs = 20_000,
): Promise<string> {
  const end = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < end) {
    const r = aivyx(args, env);
    last = `${r.stdout}${r.stderr}`;
    if (r.status === 0 && ok(r.stdout)) return r.stdout;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`aivyx ${args.join(' ')} never matched; last output:\n${last}`);
}
