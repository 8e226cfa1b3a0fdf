/**
 * A PostgreSQL server of the test's own (initdb'd in a temporary directory, on its own port), so a
 * fault-injection test can stop and restart a real database at scripted moments without touching
 * the shared server at 127.0.0.1:5432 that other tests use. Uses the Debian PostgreSQL binaries;
 * when run as root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../infra/temporal/free-port.js';

/** A running scratch server. */
export interface ScratchPostgres {
  /** postgres://… of its `aivyx` database. */
  url: string;
  port: number;
  /** Stops it the hard way (`-m immediate`: like a crash; connections are cut). */
  stop(): void;
  /** Starts it again on the same data directory and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it for `ms` milliseconds, then starts it again. */
  outage(ms: number): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): void;
}

/** The Debian PostgreSQL bin directory (newest major), if installed. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const major = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return major && existsSync(join(root, major, 'bin', 'pg_ctl')) ? join(root, major, 'bin') : undefined;
}

/** Starts a scratch server with an `aivyx` database (trust auth, loopback only). */
export async function startScratchPostgres(): Promise<ScratchPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'aivyx-scratch-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: hand the directory to the postgres user and run as it.
  if (asRoot)
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
      Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
    );
  const run = (exe: string, args: string[]): void => {
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, exe), ...args]] : [join(bin, exe), args];
    const r = spawnSync(cmd, argv as string[], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${exe} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = async (): Promise<void> => {
    run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']);
  };
  const stop = (): void => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  await start();
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query('create database aivyx');
  await admin.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/aivyx`,
    port,
    stop,
    start,
    async outage(ms) {
      stop();
      await new Promise((r) => setTimeout(r, ms));
      await start();
    },
    destroy() {
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
