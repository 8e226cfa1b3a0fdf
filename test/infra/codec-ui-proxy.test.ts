/**
 * The codec server serving the Temporal UI under its own origin (infra/codec/ui-proxy.ts), against
 * a real HTTP upstream that reports what reached it: a page opened without a session goes to the
 * sign-in first and comes back to where it was asked for; the UI never receives our session cookie
 * or a bearer token; the codec's own endpoints stay ours; the return path cannot leave the origin.
 * (The real Temporal UI through it, in a real browser: test/e2e/ui-codec-signin.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayloadCodec, startCodecServer, type CodecServer } from '../../infra/codec/index.js';
import { localPath } from '../../infra/codec/ui-proxy.js';

const token = randomBytes(32).toString('hex');
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
let upstream: Server;
let server: CodecServer;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.setHeader('set-cookie', '_csrf=abc; Path=/; SameSite=Strict');
      res.setHeader('content-type', 'text/html');
      res.end(`<p>ui page ${req.url}</p>`);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const ui = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  server = await startCodecServer({
    codec: createPayloadCodec(new Uint8Array(randomBytes(32))),
    token,
    allowedOrigin: ui,
    uiUpstream: ui,
  });
});
afterAll(async () => {
  await server?.stop();
  await new Promise((r) => upstream?.close(r));
});

/** A browser's page load (fetch may not send Sec-Fetch-* headers of its own choosing: raw HTTP does). */
function navigate(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none', ...headers } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
const signIn = async (next?: string): Promise<{ location: string | null; session: string }> => {
  const res = await fetch(`${server.url}/login${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  return { location: res.headers.get('location'), session: /^aivyx_codec=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '' };
};

describe('codec server serving the Temporal UI', () => {
  it('sends a page opened without a session to the sign-in, and back to that page after it', async () => {
    const wanted = '/namespaces/default/workflows?query=AivyxMissionState%3D%22waiting%22';
    const first = await navigate(wanted);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe(`/login?next=${encodeURIComponent(wanted)}`);
    expect(seen).toHaveLength(0);

    const login = await fetch(`${server.url}${first.headers.location ?? ''}`);
    expect(login.status).toBe(200);
    // Served here, the redirect after signing in is same-origin: the policy needs no other target.
    expect(login.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    );
    const { location, session } = await signIn(wanted);
    expect(location).toBe(wanted);

    const page = await navigate(wanted, { cookie: `_csrf=abc; aivyx_codec=${session}; other=1` });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`ui page ${wanted}`);
    expect(page.headers['set-cookie']?.[0]).toMatch(/^_csrf=abc/);
    // The UI gets its own cookies, never our session id.
    expect(seen.at(-1)?.headers.cookie).toBe('_csrf=abc; other=1');
  });

  it('lets the UI load without a session where a browser withholds the cookie (cross-site links) and for its own requests', async () => {
    const crossSite = await navigate('/namespaces/default/workflows', { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(200);
    const api = await fetch(`${server.url}/api/v1/settings`);
    expect(api.status).toBe(200);
    expect(seen.at(-1)?.url).toBe('/api/v1/settings');
  });

  it('keeps /encode and /decode its own (401 without a session) and forwards UI paths that merely end in /decode', async () => {
    const body = JSON.stringify({ payloads: [] });
    expect((await fetch(`${server.url}/decode`, { method: 'POST', body })).status).toBe(401);
    const count = seen.length;
    const ok = await fetch(`${server.url}/decode`, { method: 'POST', body, headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(seen).toHaveLength(count);

    // The UI's API for a workflow named "decode": the UI's, with its body, without our bearer token.
    const { session } = await signIn();
    const started = await fetch(`${server.url}/api/v1/namespaces/default/workflows/decode`, {
      method: 'POST',
      body: '{"workflowType":"x"}',
      headers: { authorization: `Bearer ${token}`, cookie: `aivyx_codec=${session}` },
    });
    expect(started.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/api/v1/namespaces/default/workflows/decode', body: '{"workflowType":"x"}' });
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
    expect(seen.at(-1)?.headers.cookie).toBeUndefined();
  });

  it('attack: the return path after sign-in never leaves this origin (no open redirect)', async () => {
    for (const next of ['//evil.example', '/\\evil.example', '/.//evil.example', '/x/../..//evil.example', 'http://evil.example/', ' /x'])
      expect((await signIn(next)).location, next).toBe('/');
    expect(localPath('/\tnamespaces')).toBe('/namespaces');
    expect(localPath(undefined)).toBe('/');
  });
});
