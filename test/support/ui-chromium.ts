/**
 * Headless Chromium for UI tests: renders a page (the Temporal UI is a single-page app, so it
 * runs with a virtual-time budget that lets its API calls finish) and returns the DOM after
 * scripts ran, or writes a screenshot. Debian's `chromium` package; CHROMIUM_PATH overrides.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Chromium binary, or undefined when it is not installed (tests skip then). */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const candidate of [env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // try the next one
    }
  }
  return undefined;
}

/** How to render: window size and how much virtual time the page gets to settle. */
export interface RenderOptions {
  width?: number;
  height?: number;
  /** Virtual milliseconds Chromium lets timers and fetches run before it dumps or shoots (default 15,000). */
  virtualTimeMs?: number;
  /** Real-time limit for the whole Chromium run (default 60 s). */
  timeoutMs?: number;
}

function flags(opts: RenderOptions, profile: string): string[] {
  return [
    '--headless',
    '--no-sandbox', // root in CI containers; the page is our own UI on 127.0.0.1
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-extensions',
    '--no-first-run',
    '--hide-scrollbars',
    `--user-data-dir=${profile}`,
    `--window-size=${opts.width ?? 1400},${opts.height ?? 900}`,
    `--virtual-time-budget=${opts.virtualTimeMs ?? 15_000}`,
  ];
}

async function withProfile<T>(fn: (profile: string) => Promise<T>): Promise<T> {
  const profile = mkdtempSync(join(tmpdir(), 'aivyx-chromium-'));
  try {
    return await fn(profile);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** The serialized DOM of `url` after its scripts ran (`--dump-dom`). */
export function dumpDom(chromium: string, url: string, opts: RenderOptions = {}): Promise<string> {
  return withProfile(async (profile) => {
    const { stdout } = await run(chromium, [...flags(opts, profile), '--dump-dom', url], {
      timeout: opts.timeoutMs ?? 60_000,
      maxBuffer: 64 * 2 ** 20,
    });
    return stdout;
  });
}

/** Writes a PNG screenshot of `url` to `out` (`--screenshot`). */
export async function screenshot(chromium: string, url: string, out: string, opts: RenderOptions = {}): Promise<void> {
  await withProfile((profile) =>
    run(chromium, [...flags(opts, profile), `--screenshot=${out}`, url], { timeout: opts.timeoutMs ?? 60_000 }),
  );
}

/** Width and height of a PNG file (from its IHDR chunk); throws if it is not a PNG. */
export function pngSize(file: string): { width: number; height: number; bytes: number } {
  const buf = readFileSync(file);
  const signature = '89504e470d0a1a0a';
  if (buf.subarray(0, 8).toString('hex') !== signature || buf.subarray(12, 16).toString('latin1') !== 'IHDR')
    throw new Error(`${file} is not a PNG`);
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20), bytes: buf.length };
}
