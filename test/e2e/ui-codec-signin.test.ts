/**
 * The operator's first look at a decoded turn, in a real browser: `aivyx up` (dev server with its
 * UI, the codec server), one `aivyx chat -m` turn whose history on the server is encrypted, then
 * headless Chromium opens the turn at the "Temporal UI" address `up` printed, is sent to the
 * codec server's sign-in, types the token into the form, presses *Sign in* and lands back on the
 * turn, where the UI shows what was said decoded — no UI setting touched. The dev server's own UI
 * in the same browser (same cookie) still shows the payloads encoded: the control that proves
 * the check can fail. Then the sign-in of a codec server whose UI lives on another origin (a
 * cluster's, compose's): pressing *Sign in* must leave /login for that UI (the page's form-action
 * once allowed only 'self', and the browser stopped the redirect; this test fails so under it).
 * Screenshots go to docs/images/ with AIVYX_UPDATE_SCREENSHOTS=1.
 * Skipped when Chromium is not installed (`apt-get install chromium`), except under CI.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, describe, expect, it } from 'vitest';
import { createPayloadCodec, startCodecServer } from '../../infra/codec/index.js';
import { aivyx, cliEnv, spawnAivyx } from '../support/cli-process.js';
import { findChromium, openBrowser, pngSize, type BrowserPage } from '../support/ui-chromium.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const chromium = findChromium();
const home = mkdtempSync(join(tmpdir(), 'aivyx-ui-codec-'));
// Words that exist only in this turn's (encrypted) input and result.
const ASKED = `please read back the ${randomBytes(4).toString('hex')} ledger`;
const REPLIED = `the ${randomBytes(4).toString('hex')} ledger balances`;
const COULD_NOT_CONNECT = 'Codec Server could not connect';
const ENCRYPTED = 'binary/encrypted';

let up: ChildProcess | undefined;
let page: BrowserPage | undefined;
let env: NodeJS.ProcessEnv = {};
afterAll(async () => {
  await page?.close();
  up?.kill('SIGTERM');
  await new Promise((r) => (up && up.exitCode === null ? up.once('exit', r) : r(undefined)));
  rmSync(home, { recursive: true, force: true });
});

/** Types `token` into the codec server's sign-in form and presses its button, as a person would. */
async function signIn(token: string): Promise<void> {
  const p = page as BrowserPage;
  await p.waitFor(`!!document.querySelector('input[name=token]')`, 'the sign-in form');
  await p.evaluate(`document.querySelector('input[name=token]').value = ${JSON.stringify(token)}; true`);
  await p.evaluate(`document.querySelector('button').click(); true`);
}

/** The visible text of the page. */
const text = () => (page as BrowserPage).evaluate<string>('document.body ? document.body.innerText : ""');

/** Saves a screenshot of the page (always to the temp home; to docs/images/ when asked to). */
async function shoot(name: string): Promise<void> {
  const out = join(home, name);
  await (page as BrowserPage).screenshot(out);
  const png = pngSize(out);
  expect(png).toMatchObject({ width: 1200, height: 760 });
  if (process.env.AIVYX_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(join(projectRoot, 'docs/images'), { recursive: true });
    copyFileSync(out, join(projectRoot, 'docs/images', name));
  }
}

/** The first turn workflow on the server, from its raw listing (no codec: ids are never encrypted). */
async function firstTurn(address: string): Promise<{ workflowId: string; runId: string; rawHistory: Buffer }> {
  const connection = await Connection.connect({ address });
  try {
    const { executions } = await connection.workflowService.listWorkflowExecutions({
      namespace: 'default',
      query: 'WorkflowType = "turnWorkflow"',
    });
    const execution = executions?.[0]?.execution;
    if (!execution?.workflowId || !execution.runId) throw new Error('no turnWorkflow listed');
    const { history } = await connection.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution });
    return {
      workflowId: execution.workflowId,
      runId: execution.runId,
      rawHistory: Buffer.from(temporal.api.history.v1.History.encode(history ?? {}).finish()),
    };
  } finally {
    await connection.close();
  }
}

describe.skipIf(!chromium && !process.env.CI)(
  `Temporal UI decodes a turn after one sign-in${chromium ? '' : ' (skipped: no Chromium; apt-get install chromium, or set CHROMIUM_PATH)'}`,
  () => {
    it('sign in through the codec server form, land on the turn, read it decoded; the dev server UI still shows ciphertext', async () => {
      if (!chromium) throw new Error('Chromium is not installed: apt-get install chromium (or set CHROMIUM_PATH)');
      const script = join(home, 'script.json');
      writeFileSync(script, JSON.stringify({ rules: [{ match: 'ledger', steps: [{ say: REPLIED }] }] }));
      env = await cliEnv(home, script);
      const started = spawnAivyx(['up'], env);
      up = started.child;
      await started.waitFor('aivyx is up', 120_000);
      const out = started.output();
      const uiUrl = /Temporal UI: +(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      const address = /Temporal: +(127\.0\.0\.1:\d+)/.exec(out)?.[1] ?? '';
      // The address to open is the codec server's: it serves the UI, so decoding is same-origin.
      expect(uiUrl).toBe(`http://127.0.0.1:${env.AIVYX_CODEC_PORT}`);
      // And the line says what to do there: sign in once, with which token.
      expect(out).toContain(`${uiUrl}  (shows payloads decoded once you sign in with the token in ${home}/codec-token`);

      // CORS with credentials for exactly the dev server UI's origin: not localhost on its port, nothing else.
      const preflight = async (origin: string) =>
        (
          await fetch(`${uiUrl}/decode`, {
            method: 'OPTIONS',
            headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
          })
        ).headers;
      const granted = await preflight(`http://127.0.0.1:${env.AIVYX_UI_PORT}`);
      expect(granted.get('access-control-allow-origin')).toBe(`http://127.0.0.1:${env.AIVYX_UI_PORT}`);
      expect(granted.get('access-control-allow-credentials')).toBe('true');
      for (const other of [`http://localhost:${env.AIVYX_UI_PORT}`, 'http://127.0.0.1:1', 'null'])
        expect((await preflight(other)).get('access-control-allow-origin'), other).toBeNull();

      const chat = aivyx(['chat', '-m', ASKED], env);
      expect(chat.stdout).toContain(REPLIED);
      const turn = await firstTurn(address);
      // What the server holds is ciphertext: neither phrase is in the raw history.
      expect(turn.rawHistory.includes(ASKED)).toBe(false);
      expect(turn.rawHistory.includes(REPLIED)).toBe(false);
      expect(turn.rawHistory.includes(ENCRYPTED)).toBe(true);

      page = await openBrowser(chromium, { width: 1200, height: 760 });
      const turnPath = `/namespaces/default/workflows/${encodeURIComponent(turn.workflowId)}/${turn.runId}/history`;
      // Not signed in: the turn's address leads to the sign-in form first.
      await page.goto(`${uiUrl}${turnPath}`);
      await page.waitFor(`!!document.querySelector('input[name=token]')`, 'the sign-in form');
      expect(await page.evaluate<string>('location.pathname')).toBe('/login');
      await shoot('operator-ui-codec-signin.png');
      await signIn(readFileSync(join(home, 'codec-token'), 'utf8').trim());
      // Back on the turn (a CSP that blocked the 303 would leave the browser on /login).
      await page.waitFor(`location.pathname === ${JSON.stringify(turnPath)}`, 'the redirect back to the turn');
      await page.waitFor(`document.body.innerText.includes(${JSON.stringify(REPLIED)})`, 'the decoded reply', 45_000);
      await page.waitFor(`document.body.innerText.includes(${JSON.stringify(ASKED)})`, 'the decoded request', 15_000);
      const decoded = await text();
      expect(decoded).not.toContain(COULD_NOT_CONNECT);
      expect(decoded).not.toContain(ENCRYPTED);
      await shoot('operator-ui-codec-decoded.png');

      // The control: the dev server's own UI, same browser, same cookie, asks cross-origin without
      // credentials (its settings cannot say includeCredentials), so it gets 401 and shows ciphertext.
      await page.goto(`http://127.0.0.1:${env.AIVYX_UI_PORT}${turnPath}`);
      await page.waitFor(`document.body.innerText.includes(${JSON.stringify(COULD_NOT_CONNECT)})`, 'the codec error', 45_000);
      const encoded = await text();
      expect(encoded).not.toContain(REPLIED);
      expect(encoded).not.toContain(ASKED);
      await shoot('operator-ui-codec-encoded.png');
    }, 240_000);

    it('with the UI served elsewhere (a cluster, compose), Sign in leaves /login for that UI: the policy lets the form redirect there', async () => {
      const ui = `http://127.0.0.1:${env.AIVYX_UI_PORT}`;
      const token = randomBytes(32).toString('hex');
      const codec = createPayloadCodec(new Uint8Array(randomBytes(32)));
      const elsewhere = await startCodecServer({ codec, token, allowedOrigin: ui, uiUrl: ui });
      try {
        const p = page as BrowserPage;
        await p.goto(`${elsewhere.url}/login`);
        await signIn(token);
        await p.waitFor(`location.origin === ${JSON.stringify(ui)}`, `the redirect to ${ui}`);
      } finally {
        await elsewhere.stop();
      }
    }, 60_000);
  },
);
