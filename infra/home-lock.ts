/**
 * One running stack per data directory: PGlite is a single-process database and the dev
 * server's SQLite file has one owner. The lock is a pid file; a stale one (dead pid) is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AivyxError } from '../core/errors.js';

/** What a running stack publishes about itself for `aivyx chat` and `aivyx audit`. */
export interface RunningStack {
  pid: number;
  restUrl: string;
  uiUrl?: string;
  temporalAddress: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The stack running in `home`, if any (stale records are ignored). */
export function findRunningStack(home: string): RunningStack | undefined {
  try {
    const info = JSON.parse(readFileSync(join(home, 'running.json'), 'utf8')) as RunningStack;
    return alive(info.pid) ? info : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the data directory for this process; throws `Config` when another live process holds it. */
export function lockHome(home: string): { publish(info: Omit<RunningStack, 'pid'>): void; release(): void } {
  const file = join(home, 'aivyx.pid');
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
  } catch {
    const other = Number(readFileSync(file, 'utf8').trim());
    if (other !== process.pid && Number.isInteger(other) && alive(other)) {
      throw new AivyxError('Config', `the data directory ${home} is in use by another aivyx process (pid ${other})`, {
        hint: 'use that process (aivyx chat connects to it), stop it, or set AIVYX_HOME to another directory',
      });
    }
    writeFileSync(file, String(process.pid));
  }
  const running = join(home, 'running.json');
  return {
    publish: (info) => writeFileSync(running, JSON.stringify({ pid: process.pid, ...info }), { mode: 0o600 }),
    release: () => {
      rmSync(running, { force: true });
      rmSync(file, { force: true });
    },
  };
}
