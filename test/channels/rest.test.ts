/**
 * The REST channel against a real worker and dev server: streamed replies over SSE, bearer
 * token, loopback only (bind address and Host header), an oversized message refused before any
 * workflow starts, /v1/health that says only `ok` without the token and 503 while a dependency
 * is down, and re-attaching to a turn by id after its first client went away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { chatTurn, followTurn } from '../../channels/cli/chat.js';
import { sendMessage, type SseEvent } from '../../channels/cli/rest-client.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import { MAX_MESSAGE_BYTES } from '../../core/limits.js';
import { Health } from '../../infra/health.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

let h: Harness;
let rest: Awaited<ReturnType<typeof startRestServer>>;
const token = randomBytes(16).toString('hex');
const health = new Health();
health.register('temporal', { label: 'Temporal at 127.0.0.1:7233', kind: 'Channel', hint: 'wait for it' });
health.register('database', { label: 'the database (PostgreSQL at 127.0.0.1:5432/x)', kind: 'Storage', hint: 'start PostgreSQL' });

beforeAll(async () => {
  h = await startHarness({
    script: {
      rules: [
        { match: 'slow', steps: [{ say: 'one two three four', chunks: 4, chunkDelayMs: 700 }] },
        { steps: [{ say: 'streamed in several pieces for you', chunks: 4 }] },
      ],
    },
  });
  rest = await startRestServer({
    gateway: h.gateway,
    token,
    health,
    audit: { verify: () => h.verify(), tail: async () => [] },
    info: { temporalAddress: '127.0.0.1:7233' },
  });
});
afterAll(async () => {
  await rest?.stop();
  await h?.stop();
});

describe('REST channel', () => {
  it('streams a reply as SSE text events and ends with the outcome', async () => {
    const events = [];
    for await (const e of sendMessage({ url: rest.url, token }, { text: 'hi', sessionId: 'rest-s1' })) events.push(e);
    const texts = events.filter((e) => e.event === 'text');
    expect(texts.length).toBe(4);
    expect(events.at(-1)).toMatchObject({
      event: 'outcome',
      data: { status: 'Completed', finalMessage: 'streamed in several pieces for you' },
    });
  });

  it('the CLI channel prints the streamed text and the outcome line', async () => {
    let out = '';
    let err = '';
    const outcome = await chatTurn({ url: rest.url, token }, 'hello', 'rest-s2', { out: (s) => (out += s), err: (s) => (err += s) });
    expect(outcome.status).toBe('Completed');
    expect(out).toBe('streamed in several pieces for you\n');
    expect(err).toMatch(/\[Completed · no tool ran · \d+ ms · /);
  });

  it('refuses a missing or wrong token', async () => {
    const res = await fetch(`${rest.url}/v1/messages`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: '{}' });
    expect(res.status).toBe(401);
  });

  it('refuses an oversized message with 413 and a clear error, and starts no workflow', async () => {
    const sessionId = `big-${Date.now()}`;
    const res = await fetch(`${rest.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x'.repeat(MAX_MESSAGE_BYTES - 10), sessionId }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { kind: string; message: string; hint: string } };
    expect(body.error.kind).toBe('Channel');
    expect(body.error.message).toMatch(/the limit is 1\.00 MiB/);
    await expect(h.client.workflow.getHandle(sessionWorkflowId('rest', sessionId)).describe()).rejects.toThrow(/not found/i);
  });

  it('answers only to loopback Host names (DNS rebinding), on every route', async () => {
    const port = new URL(rest.url).port;
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.nip.io:${port}`, `10.0.0.1:${port}`]) {
      for (const path of ['/v1/health', '/v1/audit/verify']) {
        const r = await rawGet(port, path, host);
        expect(r.status, `${host} ${path}`).toBe(421);
        expect(r.body).toContain('not a loopback name');
        expect(r.body).not.toContain('"ok"');
      }
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
      expect((await rawGet(port, '/v1/health', host)).status, host).toBe(200);
  });

  it('/v1/health says only ok without the token; with it, each dependency; 503 while one is down', async () => {
    const anonymous = await fetch(`${rest.url}/v1/health`);
    expect(anonymous.status).toBe(200);
    expect(await anonymous.json()).toEqual({ ok: true });
    const wrong = await fetch(`${rest.url}/v1/health`, { headers: { authorization: 'Bearer nope' } });
    expect(await wrong.json()).toEqual({ ok: true });
    const detailed = (await (await fetch(`${rest.url}/v1/health`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<
      string,
      unknown
    >;
    expect(detailed).toMatchObject({
      ok: true,
      temporalAddress: '127.0.0.1:7233',
      dependencies: { temporal: { ok: true }, database: { ok: true } },
    });

    health.down('temporal', 'its process 4242 exited (SIGKILL)');
    try {
      const down = await fetch(`${rest.url}/v1/health`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ ok: false });
      const tokenDown = (await (await fetch(`${rest.url}/v1/health`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        dependencies: Record<string, { ok: boolean; detail?: string }>;
      };
      expect(tokenDown.dependencies.temporal).toMatchObject({ ok: false, detail: 'its process 4242 exited (SIGKILL)' });
      // A message while Temporal is down: 503 at once, naming it and what to do, and no turn starts.
      const sessionId = `down-${Date.now()}`;
      const res = await fetch(`${rest.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'hi', sessionId }),
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        error: {
          kind: 'Channel',
          message: 'Temporal at 127.0.0.1:7233 is unavailable: its process 4242 exited (SIGKILL)',
          hint: 'wait for it',
        },
      });
      await expect(h.client.workflow.getHandle(sessionWorkflowId('rest', sessionId)).describe()).rejects.toThrow(/not found/i);
    } finally {
      health.up('temporal');
    }
    health.down('database', 'connect ECONNREFUSED 127.0.0.1:5432');
    try {
      const audit = await fetch(`${rest.url}/v1/audit/verify`, { headers: { authorization: `Bearer ${token}` } });
      expect(audit.status).toBe(503);
      expect(await audit.json()).toMatchObject({
        error: { kind: 'Storage', message: expect.stringContaining('the database (PostgreSQL at 127.0.0.1:5432/x) is unavailable') },
      });
    } finally {
      health.up('database');
    }
    expect((await fetch(`${rest.url}/v1/health`)).status).toBe(200);
  });

  it('re-attaches to a turn by id after its first client went away, and streams the rest of it', async () => {
    const abort = new AbortController();
    let turnId: string | undefined;
    const seen: SseEvent[] = [];
    for await (const e of sendMessage({ url: rest.url, token }, { text: 'slow one', sessionId: `follow-${Date.now()}` }, abort.signal)) {
      seen.push(e);
      if (e.event === 'turn') turnId = (e.data as { turnWorkflowId: string }).turnWorkflowId;
      if (e.event === 'text') break; // the client goes away mid-turn
    }
    abort.abort();
    // The turn id came first, as soon as the turn was accepted.
    expect(seen[0]?.event).toBe('turn');
    expect(turnId).toMatch(/^turn\/cli\//);
    let out = '';
    let err = '';
    const outcome = await followTurn({ url: rest.url, token }, turnId!, { out: (s) => (out += s), err: (s) => (err += s) });
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'one two three four' });
    expect(err).toContain(`· turn ${turnId} (running)`);
    expect(err).toMatch(/\[Completed/);
    // The pieces still to come were streamed live to the follower.
    expect(out.length).toBeGreaterThan(0);
    // Following an ended turn gives its outcome at once.
    const again = await followTurn({ url: rest.url, token }, turnId!, { out: () => undefined, err: () => undefined });
    expect(again.status).toBe('Completed');
  });

  it('404 for a turn that does not exist, 400 for something that is not a turn id', async () => {
    const get = (id: string) =>
      fetch(`${rest.url}/v1/turns/${encodeURIComponent(id)}/events`, { headers: { authorization: `Bearer ${token}` } });
    const missing = await get('turn/cli/never-was');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { kind: 'NotFound', message: 'no turn turn/cli/never-was' } });
    expect((await get('session/cli/x')).status).toBe(400);
    const cancel = await fetch(`${rest.url}/v1/turns/${encodeURIComponent('turn/cli/never-was')}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cancel.status).toBe(404);
  });

  it('refuses a malformed message body with 400 naming the field', async () => {
    const post = (body: unknown) =>
      fetch(`${rest.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const empty = await post({ text: '' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toMatch(/field "text"/);
    const typo = await post({ txt: 'hi' });
    expect(((await typo.json()) as { error: { message: string } }).error.message).toMatch(/unknown field "txt"/);
    const notJson = await fetch(`${rest.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{nope',
    });
    expect(notJson.status).toBe(400);
  });

  it('binds to loopback only', async () => {
    await expect(
      startRestServer({ gateway: h.gateway, token, audit: { verify: async () => null, tail: async () => [] }, host: '0.0.0.0' }),
    ).rejects.toThrow(/loopback only/);
  });
});

/** A GET with an arbitrary Host header (fetch will not send one that differs from the URL). */
function rawGet(port: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(port), path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
