/**
 * `shell.spawn`: supervises one long-lived program (literal argv, never a shell, the environment
 * scrubbed to PATH/HOME/LANG as for shell.exec) until it exits. While it runs the tool heartbeats
 * its progress (pid, output bytes, elapsed). The program is started in its own process group;
 * when the call is cancelled (the activity's cancellation signal: the workflow cancelled the
 * activity, its heartbeat timed out, the worker is shutting down) or its maximum duration passes,
 * the whole group gets SIGTERM and, after a grace period, SIGKILL. When the program exits, what is
 * left of its group is killed too, so nothing it started outlives the call.
 *
 * At-most-once, like shell.exec: the intent is claimed before spawning, and an attempt that finds
 * it claimed (a retry after the worker died) does not spawn again: it reports that the earlier
 * attempt's result is unknown. A worker killed outright cannot kill its children: a process group
 * started by a dead worker keeps running (it is not this worker's to find) until it ends itself.
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { AivyxError } from '../../core/errors.js';
import { shellSpawnTool, SPAWN_DEFAULT_DURATION_MS, type ShellSpawnInput } from '../../core/tools/shell-spawn.js';
import { recordIntentEnd, type IntentStore } from './intent-store.js';
import type { ProtectedPaths } from './confinement.js';
import { commandRunner } from './shell-exec.js';
import { implementTool, type ToolImplementation, type ToolRunContext } from './tool-implementation.js';

/** Cap of stdout and of stderr (each): 64 KiB, half from the start of the stream, half from its end. */
export const SPAWN_OUTPUT_CAP_BYTES = 64 * 1024;
/** How often a running process's progress is heartbeated. */
export const SPAWN_HEARTBEAT_MS = 2_000;
/** Time between SIGTERM and SIGKILL of the process group. */
export const SPAWN_KILL_GRACE_MS = 3_000;

/** Output of `shell.spawn`. `stdout`/`stderr` hold head and tail when the stream was longer than the cap. */
export interface ShellSpawnOutput {
  pid: number;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  stdout: string;
  stderr: string;
  /** Bytes the process wrote, including any omitted from the middle. */
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  /** True when the process was still running at `maxDurationMs` and was terminated. */
  timedOut: boolean;
}

/** What `shell.spawn` heartbeats every {@link SPAWN_HEARTBEAT_MS}. */
export interface ShellSpawnProgress {
  tool: 'shell.spawn';
  pid: number;
  elapsedMs: number;
  stdoutBytes: number;
  stderrBytes: number;
}

/** Ports and settings of `createShellSpawnTool`. */
export interface ShellSpawnDeps {
  intents: IntentStore;
  /** Where PATH/HOME/LANG are taken from (default `process.env`); nothing else is passed on. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory when a call gives none (default: HOME, else `/`). */
  defaultCwd?: string;
  /** Directories no process may run in (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
  /** Settings for tests: heartbeat interval, SIGTERM→SIGKILL grace, per-stream output cap. */
  heartbeatMs?: number;
  killGraceMs?: number;
  outputCapBytes?: number;
}

const TOOL = 'shell.spawn';
const toolError = toolErrorFor(TOOL);

/** Hash of the validated input; raw argv never leaves the tool. */
function inputHash(req: ShellSpawnInput): string {
  return createHash('sha256')
    .update(JSON.stringify({ argv: req.argv, cwd: req.cwd, maxDurationMs: req.maxDurationMs }))
    .digest('hex');
}

/** Bytes to drop from the end of `b` so it does not end inside a UTF-8 sequence. */
function incompleteTail(b: Buffer): number {
  for (let back = 1; back <= Math.min(4, b.length); back++) {
    const byte = b[b.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** Bytes to skip at the start of `b` so it does not begin inside a UTF-8 sequence. */
function continuationHead(b: Buffer): number {
  let i = 0;
  while (i < Math.min(3, b.length) && ((b[i] as number) & 0xc0) === 0x80) i++;
  return i;
}

/**
 * Keeps the first `cap/2` and the last `cap/2` bytes of a stream, counting everything, so a chatty
 * long-lived process never grows the worker's memory and both its start and its end are kept.
 */
export function headTailBuffer(cap: number): { push(chunk: Buffer): void; bytes(): number; truncated(): boolean; text(): string } {
  const headCap = Math.ceil(cap / 2);
  const tailCap = cap - headCap;
  const head: Buffer[] = [];
  let headSize = 0;
  let tail: Buffer[] = [];
  let tailSize = 0;
  let total = 0;
  return {
    push(chunk) {
      total += chunk.length;
      let rest = chunk;
      if (headSize < headCap) {
        const take = rest.subarray(0, headCap - headSize);
        head.push(take);
        headSize += take.length;
        rest = rest.subarray(take.length);
      }
      if (rest.length === 0 || tailCap === 0) return;
      tail.push(rest.length > tailCap ? rest.subarray(rest.length - tailCap) : rest);
      tailSize += Math.min(rest.length, tailCap);
      while (tailSize - (tail[0] as Buffer).length >= tailCap) tailSize -= (tail.shift() as Buffer).length;
      if (tailSize > tailCap) {
        tail[0] = (tail[0] as Buffer).subarray(tailSize - tailCap);
        tailSize = tailCap;
      }
      if (tail.length > 64) tail = [Buffer.concat(tail)];
    },
    bytes: () => total,
    truncated: () => total > cap,
    text() {
      const h = Buffer.concat(head);
      const t = Buffer.concat(tail);
      if (total <= cap) return Buffer.concat([h, t]).toString('utf8');
      const hKept = h.subarray(0, h.length - incompleteTail(h));
      const tKept = t.subarray(continuationHead(t));
      const omitted = total - hKept.length - tKept.length;
      return `${hKept.toString('utf8')}\n[… ${omitted} bytes omitted …]\n${tKept.toString('utf8')}`;
    },
  };
}

/**
 * Sends `signal` to the process group `pid`. Never throws (it runs from timers and abort
 * listeners): a group that is already gone (ESRCH) is the goal, anything else falls back to the leader.
 */
function signalGroup(child: ChildProcess, pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') child.kill(signal);
  }
}

/** Creates the `shell.spawn` implementation over an intent store. */
export function createShellSpawnTool(deps: ShellSpawnDeps): ToolImplementation {
  const runner = commandRunner(shellSpawnTool, deps, inputHash);
  const settings = {
    heartbeatMs: deps.heartbeatMs ?? SPAWN_HEARTBEAT_MS,
    killGraceMs: deps.killGraceMs ?? SPAWN_KILL_GRACE_MS,
    outputCapBytes: deps.outputCapBytes ?? SPAWN_OUTPUT_CAP_BYTES,
  };

  return implementTool(shellSpawnTool, {
    // The argv scope (core/tools/shell-argv.ts), unless the working directory is in the data directory.
    resolveScope: runner.resolveScope,
    async run(req, ctx) {
      const cwd = await runner.claim(req, ctx, () =>
        toolError("shell.spawn was interrupted and is not re-run (at-most-once): the earlier attempt's result is unknown", {
          hint: `the command was ${req.argv[0] as string}; its process may still be running or may have finished — inspect its effects before asking to run it again`,
          detail: { idemKey: ctx.idemKey, atMostOnce: true, resultUnknown: true },
        }),
      );

      let summary = 'failed before it ended';
      try {
        const output = await supervise(req, cwd, runner.env, settings, ctx);
        summary = `${output.timedOut ? 'timed out' : output.signal ? `killed by ${output.signal}` : `exit ${output.exitCode}`} after ${output.durationMs} ms (pid ${output.pid})`;
        return { kind: 'completed', output, verified: 'Unverified' };
      } catch (e) {
        summary = e instanceof AivyxError ? e.message : 'failed';
        throw e;
      } finally {
        await recordIntentEnd(deps.intents, ctx.idemKey, summary);
      }
    },
  });
}

type Ended =
  { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null } | { kind: 'spawn-failed'; error: NodeJS.ErrnoException };

/** Spawns, heartbeats and waits; resolves with the output, or throws Cancelled / a spawn failure. */
async function supervise(
  req: ShellSpawnInput,
  cwd: string,
  env: Record<string, string>,
  settings: { heartbeatMs: number; killGraceMs: number; outputCapBytes: number },
  ctx: ToolRunContext,
): Promise<ShellSpawnOutput> {
  const [command, ...args] = req.argv as [string, ...string[]];
  const started = Date.now();
  // shell: false — argv goes to execve() as is; detached — the child leads its own process group.
  const child = spawn(command, args, { shell: false, cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const stdout = headTailBuffer(settings.outputCapBytes);
  const stderr = headTailBuffer(settings.outputCapBytes);
  child.stdout.on('data', (c: Buffer) => stdout.push(c));
  child.stderr.on('data', (c: Buffer) => stderr.push(c));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let stopping: 'timeout' | 'cancel' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: 'timeout' | 'cancel'): void => {
    if (stopping !== undefined || child.pid === undefined) return;
    stopping = why;
    const pid = child.pid;
    signalGroup(child, pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(child, pid, 'SIGKILL'), settings.killGraceMs);
  };
  const progress = (): ShellSpawnProgress => ({
    tool: TOOL,
    pid: child.pid ?? -1,
    elapsedMs: Date.now() - started,
    stdoutBytes: stdout.bytes(),
    stderrBytes: stderr.bytes(),
  });
  const deadline = setTimeout(() => stop('timeout'), req.maxDurationMs ?? SPAWN_DEFAULT_DURATION_MS);
  const beat = setInterval(() => ctx.heartbeat(progress()), settings.heartbeatMs);
  const onAbort = (): void => stop('cancel');
  ctx.signal.addEventListener('abort', onAbort, { once: true });

  let spawned = false;
  const ended = await new Promise<Ended>((resolve) => {
    child.once('spawn', () => {
      spawned = true;
      ctx.heartbeat(progress());
      // Aborted between the check in run() and the spawn: stop at once.
      if (ctx.signal.aborted) stop('cancel');
    });
    // `on`, not `once`: a later 'error' (a failed kill) must not become an uncaught exception.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (!spawned) resolve({ kind: 'spawn-failed', error });
    });
    child.once('exit', (code, signal) => resolve({ kind: 'exited', code, signal }));
  });
  clearTimeout(deadline);
  clearInterval(beat);
  ctx.signal.removeEventListener('abort', onAbort);

  if (ended.kind === 'spawn-failed') {
    clearTimeout(killTimer);
    const notFound = ended.error.code === 'ENOENT';
    throw toolError(
      notFound ? `shell.spawn: command not found: ${command}` : `shell.spawn: could not start ${command}: ${ended.error.message}`,
      {
        cause: ended.error,
        ...(notFound ? { hint: "the command is looked up on the worker's PATH" } : {}),
      },
    );
  }
  const pid = child.pid as number;
  const durationMs = Date.now() - started;
  // The leader is gone; members of its group may still hold the pipes. Give them the rest of the
  // grace period (or a moment) to finish writing, then kill whatever is left of the group.
  const wait = stopping === undefined ? 500 : settings.killGraceMs;
  let waitTimer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (waitTimer = setTimeout(resolve, wait)))]);
  clearTimeout(waitTimer);
  clearTimeout(killTimer);
  signalGroup(child, pid, 'SIGKILL');
  child.stdout.destroy();
  child.stderr.destroy();

  if (stopping === 'cancel') {
    const reason = ctx.signal.reason instanceof Error ? ctx.signal.reason.message : String(ctx.signal.reason ?? 'cancelled');
    throw new AivyxError('Cancelled', `shell.spawn was cancelled (${reason}); its process group (pid ${pid}) was killed`, {
      detail: { tool: TOOL, pid, durationMs },
    });
  }
  return {
    pid,
    exitCode: ended.code,
    signal: ended.signal,
    durationMs,
    stdout: stdout.text(),
    stderr: stderr.text(),
    stdoutBytes: stdout.bytes(),
    stderrBytes: stderr.bytes(),
    truncated: stdout.truncated() || stderr.truncated(),
    timedOut: stopping === 'timeout',
  };
}
