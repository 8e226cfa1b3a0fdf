/**
 * The app server's guards and its pass-through to the REST channel, without a browser: a REST
 * stand-in on loopback records what reaches it, so each refusal is shown to forward nothing.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppServer, type AppServer } from '../../channels/app/index.js';

const TOKEN = 'r'.repeat(43);
const seen: Array<{ method: string; url: string; auth: string; body: string }> = [];
let rest: Server;
let app: AppServer;

/** A raw request (fetch will not send a Host or an Origin of our choosing). */
function raw(path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Signs in as `aivyx app` and a browser would; returns the cookie and the page's CSRF token. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const minted = await raw('/signin/links', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  const code = new URL((JSON.parse(minted.body) as { url: string }).url).searchParams.get('code')!;
  const done = await raw('/signin', {
    method: 'POST',
    headers: { origin: app.url, 'content-type': 'application/x-www-form-urlencoded' },
    body: `code=${code}`,
  });
  expect(done.status).toBe(303);
  const cookie = String(done.headers['set-cookie']).split(';')[0]!;
  const page = await raw('/approvals', { headers: { cookie } });
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
  return { cookie, csrf };
}

beforeAll(async () => {
  rest = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization ?? '', body });
      res.setHeader('content-type', 'application/json');
      res.statusCode = req.method === 'POST' && req.url === '/v1/missions' ? 201 : 200;
      res.end(req.url?.startsWith('/v1/missions?state=waiting') ? '[]' : JSON.stringify({ ok: true, missionId: 'mission-x' }));
    });
  });
  await new Promise<void>((r) => rest.listen(0, '127.0.0.1', () => r()));
  app = await startAppServer({
    rest: { url: `http://127.0.0.1:${(rest.address() as AddressInfo).port}`, token: TOKEN },
    timeZone: 'Europe/Berlin',
  });
});

afterAll(async () => {
  await app.stop();
  rest.close();
});

describe('the app server', () => {
  it('refuses a host that is not loopback, a missing session and a link minted without the REST token', async () => {
    expect((await raw('/', { headers: { host: 'evil.example' } })).status).toBe(421);
    expect((await raw('/api/v1/inbox')).status).toBe(401);
    expect((await raw('/')).status).toBe(401);
    expect((await raw('/signin/links', { method: 'POST', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await raw('/signin', { method: 'POST', headers: { origin: app.url }, body: 'code=made-up' })).status).toBe(401);
    expect(seen).toEqual([]);
  });

  it('a link signs in once; the cookie is HttpOnly, SameSite=Strict; pages carry the CSP', async () => {
    const minted = await raw('/signin/links', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    const link = (JSON.parse(minted.body) as { url: string }).url;
    const code = new URL(link).searchParams.get('code')!;
    const post = (origin: string) =>
      raw('/signin', { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, body: `code=${code}` });
    // From another origin (another local port): refused, and the link is not used up by it.
    expect((await post('http://127.0.0.1:1')).status).toBe(403);
    const first = await post(app.url);
    expect(first.status).toBe(303);
    expect(String(first.headers['set-cookie'])).toMatch(/HttpOnly/);
    expect(String(first.headers['set-cookie'])).toMatch(/SameSite=Strict/);
    expect((await post(app.url)).status).toBe(401);
    expect((await raw(new URL(link).pathname + new URL(link).search)).status).toBe(401);
    const page = await raw('/', { headers: { cookie: String(first.headers['set-cookie']).split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('a state change needs our Origin and the CSRF token; reads pass to REST with its token', async () => {
    const { cookie, csrf } = await signIn();
    seen.length = 0;
    const body = JSON.stringify({ gateId: 'g' });
    const approve = (headers: Record<string, string>) =>
      raw('/api/v1/gates/approve', { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body });
    expect((await approve({ origin: app.url })).status).toBe(403);
    expect((await approve({ origin: 'http://127.0.0.1:1', 'x-csrf-token': csrf })).status).toBe(403);
    expect((await approve({ 'x-csrf-token': csrf })).status).toBe(403);
    expect(seen).toEqual([]);
    expect((await approve({ origin: app.url, 'x-csrf-token': csrf })).status).toBe(200);
    expect(
      (await raw('/api/v1/schedules/s1', { method: 'DELETE', headers: { cookie, origin: app.url, 'x-csrf-token': csrf } })).status,
    ).toBe(200);
    expect((await raw('/api/v1/inbox?x=1', { headers: { cookie } })).status).toBe(200);
    expect(seen.map((s) => [s.method, s.url, s.auth])).toEqual([
      ['POST', '/v1/gates/approve', `Bearer ${TOKEN}`],
      ['DELETE', '/v1/schedules/s1', `Bearer ${TOKEN}`],
      ['GET', '/v1/inbox?x=1', `Bearer ${TOKEN}`],
    ]);
    expect(seen[0]!.body).toBe(body);
  });

  it('a one-line reminder becomes a mission of a wait and a notice, holding no capabilities', async () => {
    const { cookie, csrf } = await signIn();
    const remind = (when: string) =>
      raw('/app/reminders', {
        method: 'POST',
        headers: { cookie, origin: app.url, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: JSON.stringify({ when, text: 'call the bank' }),
      });
    seen.length = 0;
    expect((await remind('in 2h')).status).toBe(201);
    expect((await remind('tomorrow 9:00')).status).toBe(201);
    const bad = await remind('whenever');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('tomorrow 9:00');
    const specs = seen.map((s) => JSON.parse(s.body) as { steps: object[]; capabilities: string[] });
    expect(specs[0]).toEqual({ goal: 'call the bank', steps: [{ wait: '2h' }, { notify: 'call the bank' }], capabilities: [] });
    expect(specs[1]!.steps[0]).toMatchObject({ waitUntil: expect.stringMatching(/T09:00/), timeZone: 'Europe/Berlin' });
    expect(specs).toHaveLength(2);
  });
});
