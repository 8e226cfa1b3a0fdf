/**
 * Headless Chromium for UI tests: renders a page (the Temporal UI is a single-page app, so it
 * runs with a virtual-time budget that lets its API calls finish) and returns the DOM after
 * scripts ran, or writes a screenshot; `openBrowser` drives a page over the DevTools protocol
 * (fill a form, click, read the DOM). Debian's `chromium` package; CHROMIUM_PATH overrides.
 */
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WebSocket } from 'undici';

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

/**
 * Removes a Chromium profile. Chromium's helper processes can still be flushing the disk cache
 * for a moment after the browser exits (ENOTEMPTY), so removal retries; a profile that still
 * cannot go is left in the temp dir rather than failing the test that used it.
 */
function removeProfile(profile: string): void {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
  } catch (e) {
    console.warn(`left Chromium profile ${profile}: ${(e as Error).message}`);
  }
}

async function withProfile<T>(fn: (profile: string) => Promise<T>): Promise<T> {
  const profile = mkdtempSync(join(tmpdir(), 'aivyx-chromium-'));
  try {
    return await fn(profile);
  } finally {
    removeProfile(profile);
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

/** A page in a running headless Chromium, driven over the DevTools protocol (clicks, typing, reads). */
export interface BrowserPage {
  /** Loads `url` (returns once the navigation is committed, not when an SPA has settled: use waitFor). */
  goto(url: string): Promise<void>;
  /** The value of a JavaScript expression in the page (awaited when it is a promise). */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy; throws with `what` after `timeoutMs`. */
  waitFor(expression: string, what: string, timeoutMs?: number): Promise<void>;
  /** Writes a PNG of the viewport to `out`. */
  screenshot(out: string): Promise<void>;
  close(): Promise<void>;
}

interface CdpMessage {
  id?: number;
  result?: unknown;
  error?: { message: string };
}

/** Starts Chromium with a fresh profile and a DevTools port of its own, and opens one page. */
export async function openBrowser(chromium: string, opts: RenderOptions = {}): Promise<BrowserPage> {
  const profile = mkdtempSync(join(tmpdir(), 'aivyx-chromium-'));
  const args = flags(opts, profile).filter((f) => !f.startsWith('--virtual-time-budget'));
  const child = spawn(chromium, [...args, '--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1', 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    removeProfile(profile);
  };
  try {
    const wsUrl = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`Chromium did not open its DevTools port:\n${err}`)), 30_000);
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => reject(new Error(`Chromium exited (code ${code}):\n${err}`)));
    });
    const ws = new WebSocket(wsUrl);
    await new Promise((resolve, reject) => {
      ws.addEventListener('open', resolve, { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot connect to ${wsUrl}`)), { once: true });
    });
    let nextId = 0;
    const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as CdpMessage;
      const waiter = msg.id === undefined ? undefined : pending.get(msg.id);
      if (!waiter) return; // an event: nothing here listens to them
      pending.delete(msg.id!);
      if (msg.error) waiter.reject(new Error(msg.error.message));
      else waiter.resolve(msg.result);
    });
    const send = <T>(method: string, params: object = {}, sessionId?: string): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const id = ++nextId;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      });
    const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    await send('Page.enable', {}, sessionId);
    // The window includes browser chrome even headless: fix the page's own viewport to the size asked for.
    const viewport = { width: opts.width ?? 1400, height: opts.height ?? 900, deviceScaleFactor: 1, mobile: false };
    await send('Emulation.setDeviceMetricsOverride', viewport, sessionId);
    const evaluate = async <T>(expression: string): Promise<T> => {
      const r = await send<{ result: { value?: unknown }; exceptionDetails?: { text: string } }>(
        'Runtime.evaluate',
        { expression, returnByValue: true, awaitPromise: true },
        sessionId,
      );
      if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
      return r.result.value as T;
    };
    return {
      goto: async (url) => {
        const r = await send<{ errorText?: string }>('Page.navigate', { url }, sessionId);
        if (r.errorText) throw new Error(`navigating to ${url}: ${r.errorText}`);
      },
      evaluate,
      waitFor: async (expression, what, timeoutMs = 30_000) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          // A navigation in flight destroys the context the expression ran in: try again.
          if (await evaluate<unknown>(expression).catch(() => false)) return;
          if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      },
      screenshot: async (out) => {
        const { data } = await send<{ data: string }>('Page.captureScreenshot', { format: 'png' }, sessionId);
        writeFileSync(out, Buffer.from(data, 'base64'));
      },
      close: async () => {
        ws.close();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
