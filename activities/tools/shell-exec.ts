/**
 * `shell.exec`: runs one program with literal arguments (never a shell), a scrubbed environment,
 * capped output and a hard timeout. At-most-once: the intent is claimed before spawning, and an
 * attempt that finds the intent already claimed (a retry after a crash) refuses to run again.
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { AivyxError } from '../../core/errors.js';
import { shellExecTool, type ShellExecInput } from '../../core/tools/shell-exec.js';
import { dataDirScope, isProtectedPath, NO_PROTECTED_PATHS, type ProtectedPaths } from './confinement.js';
import { recordIntentEnd, type IntentStore } from './intent-store.js';
import { implementTool, type ToolImplementation, type ToolRunContext } from './tool-implementation.js';
import type { CommandInput } from '../../core/tools/shell-spawn.js';
import type { ToolDefinition } from '../../core/tools/define-tool.js';

/** Default timeout of one command: 30 s. */
export const SHELL_DEFAULT_TIMEOUT_MS = 30_000;
/** Cap of stdout and of stderr (each): 64 KiB; the rest is drained and dropped. */
export const SHELL_OUTPUT_CAP_BYTES = 64 * 1024;
/** The only environment variables a child sees: secrets in the worker's environment stay there. */
export const SHELL_ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG'] as const;

/** Output of `shell.exec`. `truncated` is true when stdout or stderr hit the cap. */
export interface ShellExecOutput {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
}

/** Ports and settings of `createShellExecTool`. */
export interface ShellExecDeps {
  intents: IntentStore;
  /** Where PATH/HOME/LANG are taken from (default `process.env`); nothing else is passed on. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory when a call gives none (default: HOME, else `/`). */
  defaultCwd?: string;
  /** Directories no command may run in (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
}

const TOOL = 'shell.exec';

const toolError = toolErrorFor(TOOL);

/** Hash of the validated input (sorted keys, so it is canonical JSON); raw argv never leaves the tool. */
function inputHash(req: ShellExecInput): string {
  const canonical = JSON.stringify({ argv: req.argv, cwd: req.cwd, timeoutMs: req.timeoutMs });
  return createHash('sha256').update(canonical).digest('hex');
}

/** Collects a stream up to `cap` bytes and keeps draining past it, so a chatty child never blocks. */
function capture(stream: NodeJS.ReadableStream | null, cap: number): { text(): string; truncated(): boolean } {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  stream?.on('data', (chunk: Buffer) => {
    if (size >= cap) {
      over = true;
      return;
    }
    const room = cap - size;
    if (chunk.length > room) over = true;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    chunks.push(kept);
    size += kept.length;
  });
  return { text: () => Buffer.concat(chunks).toString('utf8'), truncated: () => over };
}

/** SIGKILLs the child's whole process group (it was started detached), so grandchildren die too. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

type Ended =
  { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null } | { kind: 'spawn-failed'; error: NodeJS.ErrnoException };

/** The environment a command tool's child sees: PATH, HOME and LANG from `source`, PATH defaulted. */
export function scrubbedCommandEnv(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of SHELL_ENV_ALLOWLIST) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}

/**
 * The scope a command call really needs: its argv scope, or the Kernel-only data-directory scope
 * when its working directory resolves into a protected path. (Only the working directory can be
 * checked: arguments are not paths to the tool, so an unqualified grant reaches any file.)
 */
export async function resolveCommandScope(argvScope: string, cwd: string, paths: ProtectedPaths): Promise<string> {
  const real = await realpath(cwd).catch(() => cwd);
  return isProtectedPath(real, paths) ? dataDirScope(real) : argvScope;
}

/**
 * The prologue every command tool shares: the working directory exists (a missing one is a plain
 * failure, so it is checked before the intent is claimed) and lies outside the protected paths,
 * the call is not cancelled, and the intent is claimed — a second attempt after a crash throws
 * `interrupted()` (at most once). Resolves with the real working directory the child gets.
 */
export async function claimCommandRun(
  run: { tool: string; cwd: string; ctx: ToolRunContext; intents: IntentStore; inputHash: string; protectedPaths?: ProtectedPaths },
  interrupted: () => AivyxError,
): Promise<string> {
  const real = await realpath(run.cwd).catch(() => undefined);
  const ok =
    real !== undefined &&
    (await stat(real).then(
      (s) => s.isDirectory(),
      () => false,
    ));
  if (!ok)
    throw new AivyxError('Tool', `${run.tool}: working directory ${run.cwd} does not exist or is not a directory`, {
      detail: { tool: run.tool },
    });
  if (isProtectedPath(real, run.protectedPaths ?? NO_PROTECTED_PATHS)) {
    throw new AivyxError(
      'CapabilityDenied',
      `${run.tool}: working directory ${real} is inside aivyx's data directory, which no tool reaches below the Kernel tier`,
      { hint: 'run the command somewhere else (e.g. the workspace folder)', detail: { tool: run.tool, scope: dataDirScope(real) } },
    );
  }
  run.ctx.signal.throwIfAborted();
  const claim = await run.intents.begin(run.ctx.idemKey, { tool: run.tool, inputHash: run.inputHash });
  if (claim === 'already-started') throw interrupted();
  return real;
}

/** What a command tool is built on: the scrubbed environment, the scope over the real working directory, and the at-most-once claim. */
export function commandRunner<I extends CommandInput>(
  definition: ToolDefinition<I>,
  deps: { env?: Readonly<Record<string, string | undefined>>; defaultCwd?: string; intents: IntentStore; protectedPaths?: ProtectedPaths },
  hash: (req: I) => string,
) {
  const env = scrubbedCommandEnv(deps.env ?? process.env);
  const defaultCwd = deps.defaultCwd ?? env.HOME ?? '/';
  const protectedPaths = deps.protectedPaths ?? NO_PROTECTED_PATHS;
  return {
    env,
    resolveScope: async (input: I): Promise<string> =>
      resolveCommandScope(definition.scopeOf(input), input.cwd ?? defaultCwd, protectedPaths),
    claim: (req: I, ctx: ToolRunContext, interrupted: () => AivyxError): Promise<string> =>
      claimCommandRun(
        { tool: definition.id, cwd: req.cwd ?? defaultCwd, ctx, intents: deps.intents, inputHash: hash(req), protectedPaths },
        interrupted,
      ),
  };
}

/** Creates the `shell.exec` implementation over an intent store. */
export function createShellExecTool(deps: ShellExecDeps): ToolImplementation {
  const runner = commandRunner(shellExecTool, deps, inputHash);

  return implementTool(shellExecTool, {
    // The argv scope (core/tools/shell-argv.ts), unless the working directory is in the data directory.
    resolveScope: runner.resolveScope,
    async run(req, ctx) {
      const cwd = await runner.claim(req, ctx, () =>
        toolError('shell.exec was interrupted and is not re-run (at-most-once); check whether it took effect', {
          hint: `the command was ${req.argv[0] as string}; inspect its effects before asking to run it again`,
          detail: { idemKey: ctx.idemKey, atMostOnce: true },
        }),
      );

      let summary = 'failed before it ended';
      try {
        const output = await execute(req, cwd, runner.env, ctx);
        summary = output.timedOut ? 'timed out (SIGKILL)' : output.signal ? `killed by ${output.signal}` : `exit ${output.exitCode}`;
        return { kind: 'completed', output, verified: 'Unverified' };
      } catch (e) {
        summary = ctx.signal.aborted ? 'cancelled (SIGKILL)' : e instanceof AivyxError ? e.message : 'failed';
        throw e;
      } finally {
        await recordIntentEnd(deps.intents, ctx.idemKey, summary);
      }
    },
  });
}

/** Spawns and waits; resolves with the output, or throws the abort reason / a spawn failure. */
export async function execute(
  req: ShellExecInput,
  cwd: string,
  env: Record<string, string>,
  ctx: Parameters<ToolImplementation['run']>[1],
): Promise<ShellExecOutput> {
  const [command, ...args] = req.argv as [string, ...string[]];
  // shell: false — argv goes to execve() as is, so `$(id)`, `;` and globs are plain bytes.
  const child = spawn(command, args, { shell: false, cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const stdout = capture(child.stdout, SHELL_OUTPUT_CAP_BYTES);
  const stderr = capture(child.stderr, SHELL_OUTPUT_CAP_BYTES);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, req.timeoutMs ?? SHELL_DEFAULT_TIMEOUT_MS);
  const started = Date.now();
  const beat = setInterval(() => ctx.heartbeat({ tool: TOOL, elapsedMs: Date.now() - started }), 1_000);
  const onAbort = () => killGroup(child);
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  let spawned = false;
  const ended = await new Promise<Ended>((resolve) => {
    child.once('spawn', () => (spawned = true));
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (!spawned) resolve({ kind: 'spawn-failed', error });
    });
    child.once('close', (code, signal) => resolve({ kind: 'exited', code, signal }));
  }).finally(() => {
    clearTimeout(timer);
    clearInterval(beat);
    ctx.signal.removeEventListener('abort', onAbort);
  });

  if (ctx.signal.aborted) throw ctx.signal.reason ?? new AivyxError('Cancelled', 'shell.exec was cancelled; the command was killed');
  if (ended.kind === 'spawn-failed') {
    const notFound = ended.error.code === 'ENOENT';
    throw toolError(
      notFound ? `shell.exec: command not found: ${command}` : `shell.exec: could not start ${command}: ${ended.error.message}`,
      {
        cause: ended.error,
        ...(notFound ? { hint: "the command is looked up on the worker's PATH" } : {}),
      },
    );
  }
  return {
    exitCode: ended.code,
    signal: ended.signal,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated: stdout.truncated() || stderr.truncated(),
    timedOut,
  };
}
