/**
 * The owner's app in a real browser (Playwright driving Debian's Chromium; no browser download)
 * against ONE real `aivyx up` for the whole file: sign in with the link `aivyx app` prints; chat
 * with streamed text; a confirm-first call approved in the app runs once and its output appears; a
 * denied one runs nothing; a reminder made in the app arrives in its inbox; an approval made in the
 * CLI shows as decided in the open page. And the attacks, each refused with nothing run: no session,
 * a cross-site POST, a stale Approve button, a non-loopback Host, markup in a message, a tool's
 * output and a file name (inert: escaped, and the CSP blocks what escaping might miss), a used link.
 * Screenshots of each page go to docs/images/ with AIVYX_UPDATE_SCREENSHOTS=1.
 * Skipped when Chromium is not installed, except under CI.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/temporal/index.js';
import { aivyx, aivyxAsync, cliEnv, spawnAivyx } from '../support/cli-process.js';
import { findChromium } from '../support/ui-chromium.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const executablePath = findChromium();
const home = mkdtempSync(join(tmpdir(), 'aivyx-app-'));
const nonce = randomBytes(4).toString('hex');
// Markup that would run if any of it were parsed as HTML: every hit sets window.__pwned.
const SCRIPT_TAG = '<script>window.__pwned="script"</script>';
const IMG_TAG = '<img src=x onerror="window.__pwned=\'img\'">';
// No double quotes: the call is shown canonical (JSON strings), which would escape them.
const FILE_NAME = "<img src=x onerror=window.__pwned='file'>.txt";

let up: ChildProcess | undefined;
let env: NodeJS.ProcessEnv = {};
let appUrl = '';
let restUrl = '';
let browser: Browser | undefined;
let owner: BrowserContext;
let chat: Page;
let signInLink = '';

/** The REST channel, with its token (what `aivyx` itself uses): the test's view of what ran. */
async function rest<T>(path: string): Promise<T> {
  const res = await fetch(`${restUrl}${path}`, {
    headers: { authorization: `Bearer ${readFileSync(join(home, 'rest-token'), 'utf8').trim()}` },
  });
  return (await res.json()) as T;
}

/** Audit events, oldest first. */
async function events(): Promise<Array<Record<string, unknown>>> {
  const rows = await rest<Array<{ event: Record<string, unknown> }>>('/v1/audit/tail?n=1000');
  return rows.map((r) => r.event);
}

/** Completed shell.exec calls so far (what actually ran). */
const ranCalls = async () =>
  (await events()).filter((e) => e.type === 'ToolCall' && e.toolId === 'shell.exec' && String(e.outcome).startsWith('Completed')).length;

/** Saves a screenshot of `page` (to docs/images/ when asked to). */
async function shoot(page: Page, name: string): Promise<void> {
  const out = join(home, name);
  await page.screenshot({ path: out });
  if (process.env.AIVYX_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(join(projectRoot, 'docs/images'), { recursive: true });
    copyFileSync(out, join(projectRoot, 'docs/images', name));
  }
}

/** Sends a message in the chat page and waits for its turn's outcome; returns the assistant entry. */
async function say(page: Page, text: string) {
  const before = await page.locator('#log li.assistant').count();
  await page.locator('#chat-text').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  const entry = page.locator('#log li.assistant').nth(before);
  await entry.and(page.locator('[data-outcome]')).waitFor({ timeout: 90_000 });
  return entry;
}

/** Nothing the page received ran as script. */
const pwned = (page: Page) => page.evaluate<string | undefined>('window.__pwned');

/** A raw HTTP request (fetch will not send a Host of our choosing). */
function raw(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

beforeAll(async () => {
  if (!executablePath) return;
  const script = join(home, 'script.json');
  const echo = (words: string) => ({ call: [{ tool: 'shell.exec', input: { argv: ['echo', words] } }] });
  writeFileSync(
    script,
    JSON.stringify({
      rules: [
        { match: 'stream please', steps: [{ say: 'one two three four five six', chunks: 6, chunkDelayMs: 150 }] },
        { match: 'run echo', steps: [echo(`app-ran-${nonce}`), { say: 'echo says: {{result.0.output.stdout}}' }] },
        { match: 'echo markup', steps: [echo(`${SCRIPT_TAG}${IMG_TAG}`), { say: 'tool said: {{result.0.output.stdout}}' }] },
        {
          match: 'cat the file',
          steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['cat', FILE_NAME] } }] }, { say: 'the file is read' }],
        },
        { match: 'say markup', steps: [{ say: `here: ${SCRIPT_TAG}${IMG_TAG}` }] },
        { match: 'approve it there', steps: [echo(`page-ran-${nonce}`), { say: 'page says: {{result.0.output.stdout}}' }] },
        { match: 'cli decides', steps: [echo(`cli-approved-${nonce}`), { say: 'cli says: {{result.0.output.stdout}}' }] },
        { steps: [{ say: 'ok' }] },
      ],
    }),
  );
  env = await cliEnv(home, script, { AIVYX_APP_PORT: String(await freePort()), PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' });
  const started = spawnAivyx(['up'], env);
  up = started.child;
  await started.waitFor('aivyx is up', 180_000);
  appUrl = /App: +(http:\/\/127\.0\.0\.1:\d+)/.exec(started.output())?.[1] ?? '';
  restUrl = /REST channel: +(http:\/\/127\.0\.0\.1:\d+)/.exec(started.output())?.[1] ?? '';
  expect(appUrl).toBe(`http://127.0.0.1:${env.AIVYX_APP_PORT}`);
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  owner = await browser.newContext({ viewport: { width: 1200, height: 800 } });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  up?.kill('SIGTERM');
  await new Promise((r) => (up && up.exitCode === null ? up.once('exit', r) : r(undefined)));
  rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!executablePath && !process.env.CI)(
  `the owner's app in Chromium${executablePath ? '' : ' (skipped: no Chromium; apt-get install chromium)'}`,
  () => {
    it('no session: the API answers 401 and pages say how to sign in; nothing is served to another Host', async () => {
      if (!executablePath) throw new Error('Chromium is not installed: apt-get install chromium');
      expect((await fetch(`${appUrl}/api/v1/inbox`)).status).toBe(401);
      const post = await fetch(`${appUrl}/api/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: appUrl },
        body: JSON.stringify({ text: 'stream please' }),
      });
      expect(post.status).toBe(401);
      const page = await fetch(`${appUrl}/approvals`);
      expect(page.status).toBe(401);
      expect(await page.text()).toContain('aivyx app');
      // DNS rebinding: a name that resolves to 127.0.0.1 still sends its own Host.
      const rebound = await raw(`${appUrl}/signin/links`, { method: 'POST', headers: { host: `evil.example:${env.AIVYX_APP_PORT}` } });
      expect(rebound.status).toBe(421);
      expect((await raw(`${appUrl}/`, { headers: { host: 'evil.example' } })).status).toBe(421);
    });

    it('signs in with the link `aivyx app` prints: an HttpOnly, SameSite=Strict cookie that is not the token', async () => {
      const printed = aivyx(['app', '--no-open'], env);
      expect(printed.status, printed.stderr).toBe(0);
      signInLink = /(http:\/\/127\.0\.0\.1:\d+\/signin\?code=[\w-]+)/.exec(printed.stdout)?.[1] ?? '';
      expect(signInLink).not.toBe('');
      chat = await owner.newPage();
      await chat.goto(signInLink);
      await shoot(chat, 'app-signin.png');
      await chat.getByRole('button', { name: 'Sign in' }).click();
      await chat.waitForURL(`${appUrl}/`);
      await chat.getByRole('heading', { name: 'Chat' }).waitFor();
      const [cookie] = await owner.cookies(appUrl);
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      expect(cookie?.value).not.toContain(readFileSync(join(home, 'rest-token'), 'utf8').trim());
    });

    it('a used link signs no one in again', async () => {
      const other = await browser!.newContext();
      try {
        const page = await other.newPage();
        const res = await page.goto(signInLink);
        expect(res?.status()).toBe(401);
        await page.getByText('already used or has expired').waitFor();
        const code = new URL(signInLink).searchParams.get('code')!;
        const again = await fetch(`${appUrl}/signin`, {
          method: 'POST',
          headers: { origin: appUrl },
          body: new URLSearchParams({ code }),
          redirect: 'manual',
        });
        expect(again.status).toBe(401);
        expect(again.headers.get('set-cookie')).toBeNull();
        expect(await other.cookies(appUrl)).toEqual([]);
      } finally {
        await other.close();
      }
    });

    it('chat: the reply streams in piece by piece', async () => {
      // Every distinct text the reply shows while it streams.
      await chat.evaluate(`(() => {
        const seen = (window.__seen = new Set());
        new MutationObserver(() => document.querySelectorAll('#log li.assistant .reply').forEach((r) => seen.add(r.textContent))).observe(
          document.getElementById('log'), { subtree: true, childList: true, characterData: true });
      })()`);
      const entry = await say(chat, 'stream please');
      expect(await entry.locator('.reply').textContent()).toBe('one two three four five six');
      const seen = await chat.evaluate<string[]>('[...window.__seen]');
      expect(seen.filter((s) => s && s !== 'one two three four five six').length).toBeGreaterThanOrEqual(2);
      await shoot(chat, 'app-chat.png');
    });

    it('a confirm-first call approved in the app runs once, and its output appears', async () => {
      const ranBefore = await ranCalls();
      const entry = await say(chat, 'run echo');
      const card = entry.locator('article.gate');
      await card.waitFor();
      // The exact call and why it needs approval, before anything runs.
      expect(await card.locator('h3').textContent()).toBe('shell.exec');
      expect(await card.locator('pre.call').textContent()).toContain(`app-ran-${nonce}`);
      expect(await card.textContent()).toMatch(/Why it needs approval: .+/);
      expect(await ranCalls()).toBe(ranBefore);
      await shoot(chat, 'app-chat-approval.png');
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.locator('.after').getByText(`echo says: app-ran-${nonce}`).waitFor({ timeout: 90_000 });
      expect(await ranCalls()).toBe(ranBefore + 1);
      const approved = (await events()).filter((e) => e.type === 'GateApproved');
      expect(approved.at(-1)).toMatchObject({ approver: 'local-user' });
    });

    it('approved on the approvals page, the call runs once and its output appears there', async () => {
      const ranBefore = await ranCalls();
      await (await say(chat, 'approve it there')).locator('article.gate').waitFor();
      const page = await owner.newPage();
      await page.goto(`${appUrl}/approvals`);
      const card = page.locator('article.gate', { hasText: `page-ran-${nonce}` });
      await card.getByText(/Why it needs approval:/).waitFor();
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.locator('.after').getByText(`page says: page-ran-${nonce}`).waitFor({ timeout: 90_000 });
      expect(await ranCalls()).toBe(ranBefore + 1);
      await page.close();
    });

    it('a denied call runs nothing; its file name, on the approvals page too, stays text', async () => {
      const ranBefore = await ranCalls();
      const entry = await say(chat, 'cat the file');
      const card = entry.locator('article.gate');
      await card.waitFor();
      expect(await card.locator('pre.call').textContent()).toContain(FILE_NAME);
      // The server-rendered approvals page shows the same call, escaped.
      const approvals = await owner.newPage();
      await approvals.goto(`${appUrl}/approvals`);
      await approvals.locator('article.gate pre.call', { hasText: FILE_NAME }).waitFor();
      expect(await approvals.locator('article.gate img').count()).toBe(0);
      expect(await pwned(approvals)).toBeUndefined();
      await shoot(approvals, 'app-approvals.png');
      await approvals.close();
      await card.getByRole('button', { name: 'Deny' }).click();
      await card.getByText('Denied: nothing ran.').waitFor();
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await ranCalls()).toBe(ranBefore);
      expect((await events()).some((e) => e.type === 'GateDenied')).toBe(true);
      expect(await pwned(chat)).toBeUndefined();
    });

    it('markup in a message and in a tool output is shown as text and never runs', async () => {
      const entry = await say(chat, `say markup ${SCRIPT_TAG}`);
      expect(await chat.locator('#log li.you').last().textContent()).toContain(SCRIPT_TAG);
      expect(await entry.locator('.reply').textContent()).toBe(`here: ${SCRIPT_TAG}${IMG_TAG}`);
      const tool = await say(chat, 'echo markup');
      const card = tool.locator('article.gate');
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.locator('.after').getByText(`tool said: ${SCRIPT_TAG}${IMG_TAG}`).waitFor({ timeout: 90_000 });
      expect(await chat.locator('#log img, #log script').count()).toBe(0);
      expect(await pwned(chat)).toBeUndefined();
      // And the CSP is the second wall: markup injected into the page anyway does not run.
      const blocked = await chat.evaluate<string[]>(`(async () => {
        const violations = [];
        document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
        document.body.insertAdjacentHTML('beforeend', '<img src="data:," onerror="window.__pwned=1">');
        const s = document.createElement('script');
        s.textContent = 'window.__pwned = 2';
        document.body.append(s);
        await new Promise((r) => setTimeout(r, 500));
        return violations;
      })()`);
      expect(await pwned(chat)).toBeUndefined();
      expect(blocked.some((d) => d.startsWith('script-src'))).toBe(true);
    });

    it('an approval made in the CLI shows as decided in the open page; the stale Approve button then changes nothing', async () => {
      const entry = await say(chat, 'cli decides');
      const card = entry.locator('article.gate');
      await card.waitFor();
      const gateId = (await card.getAttribute('data-gate'))!;
      const approvals = await owner.newPage();
      await approvals.goto(`${appUrl}/approvals`);
      const open = approvals.locator(`article.gate[data-gate="${gateId}"]`);
      await open.waitFor();
      const cli = await aivyxAsync(['approve', gateId], env);
      expect(cli.stdout, cli.stderr).toContain('approved');
      await open.locator('.state', { hasText: 'decided elsewhere: approved' }).waitFor({ timeout: 30_000 });
      expect(await open.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
      await shoot(approvals, 'app-approvals-decided.png');
      await approvals.close();
      // The chat's card was never refreshed: its Approve is stale.
      const ranAfterCli = async () => (await events()).filter((e) => e.type === 'ToolCall' && String(e.outcome).startsWith('Completed'));
      await expect.poll(async () => (await ranAfterCli()).length, { timeout: 60_000 }).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 3_000));
      const ranBefore = await ranCalls();
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.getByText('already decided or closed elsewhere').waitFor();
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await ranCalls()).toBe(ranBefore);
    });

    it('a cross-site POST carries the cookie (another port is the same site) and is refused: nothing runs', async () => {
      const turnsBefore = (await events()).filter((e) => e.type === 'TurnStarted').length;
      const evil: Server = createServer((_req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end(`<form id=f method=post action="${appUrl}/api/v1/messages" enctype="text/plain">
<input name='{"text":"stream please","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`);
      });
      await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
      const page = await owner.newPage();
      try {
        const refused = page.waitForResponse((r) => r.url() === `${appUrl}/api/v1/messages`);
        await page.goto(`http://127.0.0.1:${(evil.address() as { port: number }).port}/`);
        const res = await refused;
        expect(res.status()).toBe(403);
        expect(await res.text()).toContain('cross-site request refused');
      } finally {
        await page.close();
        evil.close();
      }
      // Same origin, same cookie, but no CSRF token (what a script elsewhere could not read): refused too.
      const forged = await chat.evaluate<number>(
        `fetch('/api/v1/messages', { method: 'POST', body: '{"text":"stream please"}' }).then((r) => r.status)`,
      );
      expect(forged).toBe(403);
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await events()).filter((e) => e.type === 'TurnStarted').length).toBe(turnsBefore);
    });

    it('a reminder made in the app arrives in its inbox', async () => {
      const page = await owner.newPage();
      await page.goto(`${appUrl}/missions`);
      await page.getByLabel('When').fill('in 3s');
      await page.getByLabel('Remind me to').fill(`water the plants ${nonce}`);
      await page.getByRole('button', { name: 'Create reminder' }).click();
      const set = page.getByText(/Reminder set: mission-/);
      await set.waitFor();
      const missionId = (await set.textContent())!.replace('Reminder set: ', '');
      // Listed once the list refreshes (visibility is eventually consistent).
      await page.locator('#live').getByRole('link', { name: missionId }).waitFor({ timeout: 30_000 });
      await shoot(page, 'app-missions.png');
      await page.goto(`${appUrl}/inbox`);
      await page.getByText(`water the plants ${nonce}`).waitFor({ timeout: 90_000 });
      await shoot(page, 'app-inbox.png');
      await page.close();
    });

    it('a reminder for tomorrow 9:00 can be cancelled from the missions page', async () => {
      const page = await owner.newPage();
      await page.goto(`${appUrl}/missions`);
      await page.getByLabel('When').fill('tomorrow 9:00');
      await page.getByLabel('Remind me to').fill('call the bank');
      await page.getByRole('button', { name: 'Create reminder' }).click();
      const set = page.getByText(/Reminder set: mission-/);
      await set.waitFor();
      const missionId = (await set.textContent())!.replace('Reminder set: ', '');
      const row = page.locator('#live tr', { has: page.getByRole('link', { name: missionId }) });
      await row.getByRole('button', { name: 'Cancel' }).click({ timeout: 30_000 });
      await expect
        .poll(async () => (await rest<{ state: string }>(`/v1/missions/${missionId}`)).state, { timeout: 30_000 })
        .toBe('cancelled');
      await page.close();
    });

    it('memory and audit pages: the chain verifies, the newest entries are listed', async () => {
      const page = await owner.newPage();
      await page.goto(`${appUrl}/memory`);
      await page.getByRole('heading', { name: 'Memory' }).waitFor();
      await shoot(page, 'app-memory.png');
      await page.goto(`${appUrl}/audit`);
      await page.getByText(/The audit chain verifies: \d+ entries/).waitFor();
      expect(await page.getByRole('cell', { name: 'GateApproved' }).count()).toBeGreaterThan(0);
      await shoot(page, 'app-audit.png');
      const res = await page.goto(`${appUrl}/audit`);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.close();
    });
  },
);
