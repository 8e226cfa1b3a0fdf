/**
 * The codec server over real HTTP on loopback: bearer auth and the sign-in session (a random id
 * in the cookie, never the token), body limits, CORS for the UI origins only, loopback Host
 * names only, and the UI's JSON shape at any mount depth.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, startCodecServer, type CodecServer } from '../../infra/codec/index.js';

const codec = createPayloadCodec(new Uint8Array(randomBytes(32)));
const SECRET = 'aivyx-secret-codec-server';
const plain = (): Payload => defaultPayloadConverter.toPayload({ text: SECRET, n: 1 });
const token = randomBytes(32).toString('hex');
const origin = 'http://127.0.0.1:8233';
const json = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

let server: CodecServer;
beforeAll(async () => {
  server = await startCodecServer({ codec, token, allowedOrigin: [origin, 'http://localhost:8233'], bodyLimit: 64 * 1024, uiUrl: origin });
});
afterAll(async () => server?.stop());

const post = (path: string, body: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }, base = server.url) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
const signIn = (base: string, value: string) =>
  fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: value }).toString(),
    redirect: 'manual',
  });
const sessionOf = (res: Response): string => /^aivyx_codec=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';

/** A raw HTTP/1.1 request with a Host header of our choosing (fetch will not send a foreign one). */
function withHost(host: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { host, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ payloads: [] }));
  });
}

describe('codec server', () => {
  it('listens on loopback and refuses any other address', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(startCodecServer({ codec, token, allowedOrigin: origin, host: '0.0.0.0' })).rejects.toThrow(/loopback only/);
    await expect(startCodecServer({ codec, token: 'short', allowedOrigin: origin })).rejects.toThrow(/at least 16 characters/);
    // Its stable port taken by something else: a clear Config error naming the variable, not a raw EADDRINUSE.
    const taken = Number(new URL(server.url).port);
    await expect(startCodecServer({ codec, token, allowedOrigin: origin, port: taken })).rejects.toThrow(/port is in use/);
  });

  it('encodes and decodes in the UI JSON shape, at any mount depth', async () => {
    const enc = await post('/encode', JSON.stringify({ payloads: [json(plain())] }));
    expect(enc.status).toBe(200);
    const { payloads } = (await enc.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    const dec = await post('/some/prefix/decode', JSON.stringify({ payloads }));
    expect(dec.status).toBe(200);
    const out = (await dec.json()) as { payloads: Array<{ data: string }> };
    expect(Buffer.from(out.payloads[0]!.data, 'base64').toString()).toContain(SECRET);
  });

  it('answers 401 without the token, with a wrong token, and with a non-bearer scheme; 404/405 only after auth', async () => {
    const body = JSON.stringify({ payloads: [] });
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${token}x` },
      { authorization: `Basic ${token}` },
      { authorization: 'Bearer' },
    ];
    for (const headers of attempts) {
      const res = await post('/decode', body, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await res.json()) as { error: string; hint: string }).hint).toMatch(/codec-token/);
    }
    expect((await post('/elsewhere', body, {})).status).toBe(401);
    expect((await post('/elsewhere', body)).status).toBe(404);
    const get = await fetch(`${server.url}/decode`, { headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('answers 400 on malformed JSON or shape, 413 over the body cap (declared or streamed), 422 when the codec refuses', async () => {
    expect((await post('/decode', '{not json')).status).toBe(400);
    expect((await post('/decode', JSON.stringify({ payload: [] }))).status).toBe(400);
    expect((await post('/decode', JSON.stringify({ payloads: [{ data: '***' }] }))).status).toBe(400);
    expect((await post('/decode', 'x'.repeat(65 * 1024))).status).toBe(413);
    // Without a Content-Length (chunked), the limit still holds while reading.
    const chunks = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 80; i++) c.enqueue(new Uint8Array(1024).fill(120));
        c.close();
      },
    });
    const streamed = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const [sealed] = await codec.encode([plain()]);
    delete sealed!.metadata![KEY_ID_METADATA];
    const res = await post('/decode', JSON.stringify({ payloads: [json(sealed!)] }));
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ kind: 'Crypto', error: expect.stringMatching(/encryption-key-id/) as unknown });
  });

  it('grants CORS (with credentials, never *) to the UI origins only', async () => {
    const preflight = (o: string) =>
      fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin: o,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, x-namespace',
        },
      });
    for (const o of [origin, 'http://localhost:8233']) {
      const ok = await preflight(o);
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe(o);
      expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
      expect(ok.headers.get('access-control-allow-headers')).toBe('x-namespace,content-type,authorization');
    }
    const foreign = await preflight('http://evil.example');
    expect(foreign.status).toBe(204);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(foreign.headers.get('access-control-allow-credentials')).toBeNull();
    expect(foreign.headers.get('access-control-allow-headers')).toBeNull();
    // On the real request too: the UI origin gets its grant, a foreign page none (its script cannot read the answer).
    const fromUi = await post('/decode', JSON.stringify({ payloads: [] }), { authorization: `Bearer ${token}`, origin });
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(origin);
    expect(fromUi.headers.get('vary')).toMatch(/Origin/);
    const fromEvil = await post('/decode', JSON.stringify({ payloads: [] }), {
      authorization: `Bearer ${token}`,
      origin: 'http://evil.example',
    });
    expect(fromEvil.headers.get('access-control-allow-origin')).toBeNull();
    expect(fromEvil.headers.get('vary')).toMatch(/Origin/);
  });

  it('answers only to loopback Host names (DNS rebinding): a foreign Host gets 421 and no decode', async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
      expect((await withHost(host, '/decode')).status, host).toBe(200);
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost.evil.example`]) {
      const res = await withHost(host, '/decode');
      expect(res.status, host).toBe(421);
      expect(res.body).toMatch(/not a loopback name/);
    }
  });

  it('attack: the sign-in cookie never carries the token; it holds a random session id that works until it expires', async () => {
    const page = await fetch(`${server.url}/login`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/codec-token/);
    // The form may submit here and its 303 may lead to the UI's origin (another port): nothing else.
    expect(page.headers.get('content-security-policy')).toBe(
      `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${origin}; frame-ancestors 'none'`,
    );
    expect((await signIn(server.url, 'not-the-token')).status).toBe(401);

    const res = await signIn(server.url, token);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(origin);
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).not.toContain(token);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    const session = sessionOf(res);
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session).not.toContain(token.slice(0, 16));
    // Two sign-ins are two sessions: the id is random, not derived from the token.
    expect(sessionOf(await signIn(server.url, token))).not.toBe(session);

    const body = JSON.stringify({ payloads: [json((await codec.encode([plain()]))[0]!)] });
    const ok = await post('/decode', body, { cookie: `other=1; aivyx_codec=${session}`, origin });
    expect(ok.status).toBe(200);
    expect(await ok.text()).not.toBe('');
    // The token itself in the cookie (what the old server accepted) and forged ids are refused.
    for (const forged of [token, randomBytes(32).toString('base64url'), `${session}x`, '']) {
      expect((await post('/decode', body, { cookie: `aivyx_codec=${forged}` })).status, forged).toBe(401);
    }
  });

  it('an expired session id is refused', async () => {
    const short = await startCodecServer({ codec, token, allowedOrigin: origin, sessionTtlMs: 300 });
    try {
      const res = await signIn(short.url, token);
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).toMatch(/Max-Age=1;/);
      const session = sessionOf(res);
      const body = JSON.stringify({ payloads: [] });
      expect((await post('/decode', body, { cookie: `aivyx_codec=${session}` }, short.url)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 400));
      expect((await post('/decode', body, { cookie: `aivyx_codec=${session}` }, short.url)).status).toBe(401);
      // A session of one server means nothing to another.
      expect((await post('/decode', body, { cookie: `aivyx_codec=${sessionOf(await signIn(short.url, token))}` })).status).toBe(401);
    } finally {
      await short.stop();
    }
  });
});
