/**
 * One running stack per data directory: PGlite is a single-process database and the dev
 * server's SQLite file has one owner. The lock is a pid file naming its holder's role; a stale
 * one (dead pid) is taken over. `inspectHome` tells a command what it finds there, so `chat`
 * can refuse to start a second stack silently.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AivyxError } from '../core/errors.js';
import { workspaceDir } from './tier-policy.js';

/** Who holds a data directory: `aivyx up`, a command on its own stack (`--standalone`), or a one-off command on the database. */
export type HomeRole = 'up' | 'standalone' | 'command';

/** What a running stack publishes about itself for `aivyx chat` and `aivyx audit`. */
export interface RunningStack {
  pid: number;
  restUrl: string;
  /** The owner's app, when this stack serves it (`aivyx app` mints its sign-in links there). */
  appUrl?: string;
  uiUrl?: string;
  temporalAddress: string;
  /** Our dev server's pid (absent with TEMPORAL_ADDRESS); updated when it is restarted. */
  devServerPid?: number;
  role?: HomeRole;
}

/** What a command finds in a data directory. */
export type HomeState =
  | { state: 'running'; stack: RunningStack }
  /** Held by a live process that serves no REST channel (starting up, or a one-off command). */
  | { state: 'busy'; pid: number; role: HomeRole | undefined }
  /** A lock or stack record left by a process that died without cleaning up. */
  | { state: 'stale'; pid: number; role: HomeRole | undefined }
  | { state: 'free' };

const ROLE_TEXT: Record<HomeRole, string> = {
  up: 'aivyx up',
  standalone: 'an aivyx command with --standalone',
  command: 'an aivyx command',
};

/** How a role is named to a person. */
export function describeRole(role: HomeRole | undefined): string {
  return role ? ROLE_TEXT[role] : 'an aivyx process';
}

/** True while a process with this pid exists (EPERM: it exists, owned by someone else). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The lock file's holder; an older lock holds the bare pid. */
function readLock(home: string): { pid: number; role: HomeRole | undefined } | undefined {
  let text: string;
  try {
    text = readFileSync(join(home, 'aivyx.pid'), 'utf8').trim();
  } catch {
    return undefined;
  }
  if (/^\d+$/.test(text)) return { pid: Number(text), role: undefined };
  const parsed = readJson<{ pid?: unknown; role?: unknown }>(join(home, 'aivyx.pid'));
  if (!parsed || !Number.isInteger(parsed.pid)) return undefined;
  return {
    pid: parsed.pid as number,
    role: parsed.role === 'up' || parsed.role === 'standalone' || parsed.role === 'command' ? parsed.role : undefined,
  };
}

/** What is in `home`: a running stack, a live holder without one, a stale record, or nothing. */
export function inspectHome(home: string): HomeState {
  const stack = readJson<RunningStack>(join(home, 'running.json'));
  if (stack && Number.isInteger(stack.pid) && pidAlive(stack.pid)) return { state: 'running', stack };
  const lock = readLock(home);
  if (lock && lock.pid !== process.pid && pidAlive(lock.pid)) return { state: 'busy', pid: lock.pid, role: lock.role };
  if (stack && Number.isInteger(stack.pid)) return { state: 'stale', pid: stack.pid, role: stack.role ?? lock?.role };
  if (lock && lock.pid !== process.pid) return { state: 'stale', pid: lock.pid, role: lock.role };
  return { state: 'free' };
}

/** The stack running in `home`, if any (stale records are ignored). */
export function findRunningStack(home: string): RunningStack | undefined {
  const found = inspectHome(home);
  return found.state === 'running' ? found.stack : undefined;
}

/** A held data directory. */
export interface HomeLock {
  /** What the previous, dead holder had published (its dev server may still be shutting down). */
  previous: RunningStack | undefined;
  /** Publishes (or updates) this stack's record for other commands. */
  publish(info: Omit<RunningStack, 'pid' | 'role'>): void;
  release(): void;
}

/** Takes the data directory for this process; throws `Config` when another live process holds it. */
/**
 * Creates the data directory as `aivyx up` does (owner-only, with its workspace folder) when it does
 * not exist yet, so a first command (`aivyx secrets set` before any `aivyx up`) works on a fresh install.
 */
export function makeHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(workspaceDir(home), { recursive: true, mode: 0o700 });
}

export function lockHome(home: string, role: HomeRole = 'command'): HomeLock {
  const file = join(home, 'aivyx.pid');
  const mine = JSON.stringify({ pid: process.pid, role });
  try {
    writeFileSync(file, mine, { flag: 'wx' });
  } catch {
    const other = readLock(home);
    if (other && other.pid !== process.pid && pidAlive(other.pid)) {
      throw new AivyxError('Config', `the data directory ${home} is in use by ${describeRole(other.role)} (pid ${other.pid})`, {
        hint:
          other.role === 'up'
            ? 'use it (aivyx chat and aivyx mission talk to it), stop it, or set AIVYX_HOME to another directory'
            : 'wait for it to finish, stop it, or set AIVYX_HOME to another directory',
      });
    }
    writeFileSync(file, mine);
  }
  const running = join(home, 'running.json');
  const stale = readJson<RunningStack>(running);
  const previous = stale && stale.pid !== process.pid && !pidAlive(stale.pid) ? stale : undefined;
  return {
    previous,
    publish: (info) => writeFileSync(running, JSON.stringify({ pid: process.pid, role, ...info }), { mode: 0o600 }),
    release: () => {
      rmSync(running, { force: true });
      rmSync(file, { force: true });
    },
  };
}
