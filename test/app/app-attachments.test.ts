/**
 * Attachments (`fs.attach`) through ONE real `aivyx up`: `aivyx chat` saves a turn's file under
 * AIVYX_HOME/downloads and prints the path, never overwriting; a file over the limit is refused and
 * nothing is saved; the REST channel serves a file only to its own conversation (another session,
 * or a guessed id: 404) with its detected type, never as active content; and the app in Chromium
 * shows an image inline and offers an HTML file as an inert download under an escaped name; `/clear`
 * forgets the session's files (only its).
 * Skipped when Chromium is not installed, except under CI (the CLI and REST checks run regardless).
 */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';
import { chromium, type Browser } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/temporal/index.js';
import { aivyx, cliEnv, spawnAivyx } from '../support/cli-process.js';
import { findChromium } from '../support/ui-chromium.js';

const executablePath = findChromium();
const home = mkdtempSync(join(tmpdir(), 'aivyx-attach-'));
// Outside the data directory, which no host tool reaches.
const files = mkdtempSync(join(tmpdir(), 'aivyx-attach-files-'));
/** A real PNG (`width`×`height`, a blue-to-green gradient), so the browser has something to decode and show. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) rows.set([40, Math.round((200 * x) / width), 200], y * (width * 3 + 1) + 1 + x * 3);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}
const PNG = png(160, 60);
const ACTIVE = '<html><body><script>window.__pwned="attachment"</script><svg onload="window.__pwned=1"/></body></html>';
const NOTES = 'notes for the owner\n';
const HTML_NAME = '<script>alert(1)<_script>.html';
writeFileSync(join(files, 'chart.png'), PNG);
writeFileSync(join(files, HTML_NAME), ACTIVE);
writeFileSync(join(files, 'notes.txt'), NOTES);
writeFileSync(join(files, 'big.txt'), 'x'.repeat(4096));
const LIMIT = 2048;

let up: ChildProcess | undefined;
let env: NodeJS.ProcessEnv = {};
let appUrl = '';
let restUrl = '';
let browser: Browser | undefined;
const token = () => readFileSync(join(home, 'rest-token'), 'utf8').trim();

/** Runs `aivyx chat -m text` in session `session`; returns what it printed. */
function chat(text: string, session: string): { status: number | null; stdout: string; stderr: string } {
  return aivyx(['chat', '--session', session, '-m', text], env);
}

/** Starts a REST turn and returns its `outcome` event (the attachments it lists). */
async function restTurn(
  text: string,
  sessionId: string,
): Promise<{ attachments?: Array<{ id: string; name: string; mime: string; session: string }> }> {
  const res = await fetch(`${restUrl}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text, sessionId }),
  });
  const body = await res.text();
  const outcome = /event: outcome\ndata: (.*)\n/.exec(body)?.[1];
  if (!outcome) throw new Error(`no outcome in ${body}`);
  return JSON.parse(outcome) as never;
}

beforeAll(async () => {
  const script = join(home, 'script.json');
  writeFileSync(
    script,
    JSON.stringify({
      rules: [
        {
          regex: '^attach\\s+(.+)$',
          steps: [
            { call: [{ tool: 'fs.attach', input: { path: '{{match.1}}' } }] },
            { say: 'attached', sayOnFailure: 'not attached: {{results}}' },
          ],
        },
        { steps: [{ say: 'ok' }] },
      ],
    }),
  );
  env = await cliEnv(home, script, {
    AIVYX_APP_PORT: String(await freePort()),
    AIVYX_ATTACHMENT_MAX_BYTES: String(LIMIT),
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
  });
  const started = spawnAivyx(['up'], env);
  up = started.child;
  await started.waitFor('aivyx is up', 180_000);
  appUrl = /App: +(http:\/\/127\.0\.0\.1:\d+)/.exec(started.output())?.[1] ?? '';
  restUrl = /REST channel: +(http:\/\/127\.0\.0\.1:\d+)/.exec(started.output())?.[1] ?? '';
  if (executablePath) browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  up?.kill('SIGTERM');
  await new Promise((r) => (up && up.exitCode === null ? up.once('exit', r) : r(undefined)));
  rmSync(home, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

describe('attachments through aivyx up', () => {
  it('aivyx chat saves the file under AIVYX_HOME/downloads and prints the path; a second copy does not overwrite it', async () => {
    const first = chat(`attach ${join(files, 'notes.txt')}`, 'cli-files');
    expect(first.status, first.stderr).toBe(0);
    const saved = join(home, 'downloads', 'notes.txt');
    expect(first.stderr).toContain('· attached notes.txt');
    expect(first.stderr).toContain(`attachment saved: ${saved}`);
    expect(readFileSync(saved, 'utf8')).toBe(NOTES);
    const second = chat(`attach ${join(files, 'notes.txt')}`, 'cli-files');
    expect(second.stderr).toContain(`attachment saved: ${join(home, 'downloads', 'notes (1).txt')}`);
    expect(readFileSync(saved, 'utf8')).toBe(NOTES);
  }, 120_000);

  it('refuses a file over AIVYX_ATTACHMENT_MAX_BYTES with a clear reason, and saves nothing', async () => {
    const before = readdirSync(join(home, 'downloads')).length;
    const r = chat(`attach ${join(files, 'big.txt')}`, 'cli-big');
    expect(`${r.stdout}${r.stderr}`).toMatch(/larger than the attachment limit of 2048 bytes/);
    expect(r.stderr).not.toContain('attachment saved');
    expect(readdirSync(join(home, 'downloads'))).toHaveLength(before);
    expect(existsSync(join(home, 'downloads', 'big.txt'))).toBe(false);
  }, 120_000);

  it('serves a file only to its own conversation, as a download of plain text when it is HTML', async () => {
    const outcome = await restTurn(`attach ${join(files, HTML_NAME)}`, 'rest-files');
    const [file] = outcome.attachments ?? [];
    expect(file).toMatchObject({ name: '_script_alert(1)__script_.html.txt', mime: 'text/plain; charset=utf-8', session: 'rest-files' });
    const get = (id: string, session: string) =>
      fetch(`${restUrl}/v1/attachments/${id}?session=${session}`, { headers: { authorization: `Bearer ${token()}` } });
    const mine = await get(file!.id, 'rest-files');
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(mine.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(mine.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await mine.text()).toBe(ACTIVE);
    // Another conversation, a guessed id: the same 404 as for nothing at all.
    expect((await get(file!.id, 'rest-other')).status).toBe(404);
    expect((await get('0'.repeat(32), 'rest-files')).status).toBe(404);
    expect((await fetch(`${restUrl}/v1/attachments/${file!.id}?session=rest-files`)).status).toBe(401);
  }, 120_000);

  it("/clear forgets the session's files, and only that session's", async () => {
    const get = (id: string, session: string) =>
      fetch(`${restUrl}/v1/attachments/${id}?session=${session}`, { headers: { authorization: `Bearer ${token()}` } });
    const [cleared] = (await restTurn(`attach ${join(files, 'notes.txt')}`, 'rest-clear')).attachments ?? [];
    const [kept] = (await restTurn(`attach ${join(files, 'notes.txt')}`, 'rest-kept')).attachments ?? [];
    expect((await get(cleared!.id, 'rest-clear')).status).toBe(200);
    const res = await fetch(`${restUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: '/clear', sessionId: 'rest-clear' }),
    });
    expect(await res.text()).toContain('event: cleared');
    expect((await get(cleared!.id, 'rest-clear')).status).toBe(404);
    const other = await get(kept!.id, 'rest-kept');
    expect(other.status).toBe(200);
    expect(await other.text()).toBe(NOTES);
  }, 120_000);

  it.skipIf(!executablePath && !process.env.CI)(
    'the app shows an image inline and offers HTML as an inert download',
    async () => {
      if (!browser) throw new Error('Chromium is not installed: apt-get install chromium');
      const printed = aivyx(['app', '--no-open'], env);
      const link = /(http:\/\/127\.0\.0\.1:\d+\/signin\?code=[\w-]+)/.exec(printed.stdout)?.[1] ?? '';
      const owner = await browser.newContext();
      const page = await owner.newPage();
      await page.goto(link);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${appUrl}/`);
      const say = async (text: string) => {
        const before = await page.locator('#log li.assistant').count();
        await page.locator('#chat-text').fill(text);
        await page.getByRole('button', { name: 'Send' }).click();
        const entry = page.locator('#log li.assistant').nth(before);
        await entry.and(page.locator('[data-outcome]')).waitFor({ timeout: 90_000 });
        return entry;
      };

      const shown = await say(`attach ${join(files, 'chart.png')}`);
      const img = shown.locator('ul.files img');
      await img.waitFor();
      // Decoded: the browser got a PNG it could show, not an error page.
      await page.waitForFunction("document.querySelector('ul.files img')?.naturalWidth === 160");
      expect(await img.getAttribute('alt')).toBe('chart.png');
      const src = (await img.getAttribute('src')) ?? '';
      const served = await page.request.get(`${appUrl}${src}`);
      expect(served.headers()['content-type']).toBe('image/png');
      expect(served.headers()['x-content-type-options']).toBe('nosniff');
      expect(served.headers()['content-security-policy']).toContain("default-src 'none'");

      const offered = await say(`attach ${join(files, HTML_NAME)}`);
      const link2 = offered.locator('ul.files a');
      await link2.waitFor();
      expect(await link2.textContent()).toBe('_script_alert(1)__script_.html.txt');
      expect(await offered.locator('ul.files img').count()).toBe(0);
      const href = (await link2.getAttribute('href')) ?? '';
      const download = await page.request.get(`${appUrl}${href}`);
      expect(download.headers()['content-disposition']).toMatch(/^attachment;/);
      expect(download.headers()['content-type']).toBe('text/plain; charset=utf-8');
      // Its name and content were set as text, and it is a download, never a page: nothing in it ran.
      expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();

      if (process.env.AIVYX_UPDATE_SCREENSHOTS === '1') {
        const out = join(home, 'app-chat-attachments.png');
        await page.screenshot({ path: out });
        const images = fileURLToPath(new URL('../../docs/images', import.meta.url));
        mkdirSync(images, { recursive: true });
        copyFileSync(out, join(images, 'app-chat-attachments.png'));
      }

      // Another conversation's id, and no session at all.
      const id = /\/app\/attachments\/([0-9a-f]+)/.exec(href)?.[1] ?? '';
      expect((await page.request.get(`${appUrl}/app/attachments/${id}?session=app-someone-else`)).status()).toBe(404);
      expect((await fetch(`${appUrl}${href}`)).status).toBe(401);
      await owner.close();
    },
    240_000,
  );
});
