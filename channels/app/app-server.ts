/**
 * The owner's app (issue 34): a local web page for chat, approvals, inbox, missions, memory and the
 * audit log — the seed's Trusted "desktop GUI on the owner's machine". Pages are rendered here
 * (pages.ts); what they read and every decision go through the local REST channel (rest-link.ts),
 * so a gate decided here is the same signed Update as from the CLI, Telegram or e-mail.
 *
 * Who gets in: only loopback (bind address and Host header, against DNS rebinding); only a browser
 * signed in by a single-use link that `aivyx app` mints with the REST token (POST /signin/links);
 * then a random session id in an HttpOnly, SameSite=Strict cookie. Every state change also needs
 * the session's CSRF token and our own Origin: SameSite does not separate ports, so another local
 * server's page would otherwise post with our cookie. Pages carry a CSP that allows our own
 * script and style only: whatever slipped past escaping would still not run.
 *
 *   POST /signin/links            Bearer <rest-token> → {url}: a sign-in link that works once
 *   GET  /signin?code=C           the sign-in page (one button: a link preview never uses the link up)
 *   POST /signin                  code → session cookie, 303 to /
 *   POST /signout
 *   GET  / /approvals /inbox /missions /missions/:id /memory /audit     pages (?part=live: the part that refreshes)
 *   ANY  /api/v1/*                the REST channel's API (docs at channels/rest/rest-server.ts)
 *   POST /app/reminders           {when: "in 2h" | "tomorrow 9:00", text} → a reminder mission
 *   GET  /app/turn-gate?turn=T    the gate an escalated turn of this app opened, and the turn its approval re-runs
 *   GET  /app/attachments/:id?session=S   a file a turn of conversation S attached: a raster image inline, anything else a download
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import type { HeldReply } from '../../activities/ports.js';
import type { RecallResult } from '../../activities/tools/memory-port.js';
import { AivyxError } from '../../core/errors.js';
import { MAX_MESSAGE_BYTES } from '../../core/limits.js';
import { waitStepAt, waitStepIn } from '../../core/reminder-time.js';
import { assertLoopbackBind, hostName, LOOPBACK_HOSTS, loopbackHostOnly } from '../../infra/http/loopback.js';
import type { MissionStatus } from '../../workflows/mission-messages.js';
import { confirmationMissionId, confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import type { MissionSummary, ScheduleRow, SessionSummary } from '../ports.js';
import { parseBody } from '../zod-errors.js';
import { AppSessions } from './app-sessions.js';
import { APP_CSS, APP_JS } from './assets.js';
import * as pages from './pages.js';
import { callRest, restJson, type RestLink } from './rest-link.js';

/** Options of `startAppServer`. */
export interface AppServerOptions {
  rest: RestLink;
  /** A loopback address (default 127.0.0.1). */
  host?: string;
  /** Default: any free port. */
  port?: number;
  /** The owner's time zone, for reminders at a wall-clock time ("tomorrow 9:00"). */
  timeZone: string;
  sessionTtlMs?: number;
}

/** A running app server. */
export interface AppServer {
  url: string;
  stop(): Promise<void>;
}

/** Our own script and style only; no frames, no plugins, forms and fetches to this origin alone. */
export const APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const reminderBody = z.object({ when: z.string().min(1).max(100), text: z.string().min(1).max(2_000) }).strict();
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** How long an escalated turn's gate may take to open after its outcome (as the CLI waits). */
const GATE_WAIT_MS = 15_000;

/** Starts the app on loopback; resolves once it listens. */
export async function startAppServer(opts: AppServerOptions): Promise<AppServer> {
  const host = opts.host ?? '127.0.0.1';
  assertLoopbackBind(host, 'the owner app is Trusted and');
  // The routes need the URL the server got; no request is handled before `app` is set below (the
  // listen callback's continuation runs as a microtask, before any socket event).
  const server = createAdaptorServer({ fetch: (req) => app.fetch(req), hostname: host, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const app = appRoutes(opts, url, port);
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What the routes share. */
interface AppDeps extends AppServerOptions {
  sessions: AppSessions;
  url: string;
  cookie: string;
}

function appRoutes(opts: AppServerOptions, url: string, port: number): Hono {
  // Cookies ignore ports: the port in the name keeps two installs' apps on one machine apart.
  const d: AppDeps = { ...opts, sessions: new AppSessions(opts.sessionTtlMs), url, cookie: `aivyx_app_${port}` };
  const app = new Hono<{ Variables: { session: string } }>();
  app.use(
    '*',
    loopbackHostOnly((h) => ({
      error: { kind: 'CapabilityDenied', message: `Host ${JSON.stringify(h)} is not a loopback name`, hint: 'open the app at 127.0.0.1' },
    })),
  );
  app.use('*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', APP_CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    // Not no-referrer: under it Chromium sends `Origin: null` with our own forms, and the Origin check refuses them.
    c.header('Referrer-Policy', 'same-origin');
    c.header('Cache-Control', 'no-store');
  });
  app.onError((err, c) => {
    const e = err instanceof AivyxError ? err : new AivyxError('Internal', err instanceof Error ? err.message : String(err));
    return c.json({ error: e.toData() }, e.kind === 'Config' || e.kind === 'InvalidScope' ? 400 : e.kind === 'NotFound' ? 404 : 500);
  });
  app.get('/app.css', (c) => c.body(APP_CSS, 200, { 'content-type': 'text/css; charset=utf-8' }));
  app.get('/app.js', (c) => c.body(APP_JS, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  signInRoutes(app, d);
  app.use('*', requireSession(d), requireCsrf(d));
  app.post('/signout', (c) => {
    d.sessions.end(getCookie(c, d.cookie));
    deleteCookie(c, d.cookie, { path: '/' });
    return c.json({ ok: true });
  });
  // POST only: hono's body limit re-wraps a DELETE's empty body into a Request node-server cannot build (rest-server.ts).
  const limit = bodyLimit({ maxSize: MAX_MESSAGE_BYTES + 64 * 1024 });
  app.all(
    '/api/v1/*',
    (c, next) => (c.req.method === 'POST' ? limit(c, next) : next()),
    (c) => toRest(c, d),
  );
  app.post('/app/reminders', async (c) => c.json(await createReminder(d, await c.req.json().catch(() => ({}))), 201));
  app.get('/app/turn-gate', async (c) => c.json(await turnGate(d, c.req.query('turn') ?? '')));
  app.get('/app/attachments/:id', (c) => attachment(c, d));
  pageRoutes(app, d);
  app.notFound((c) => c.json({ error: { kind: 'NotFound', message: `no page ${c.req.path}` } }, 404));
  return app as unknown as Hono;
}

/** Minting links (for the REST token's holder), the sign-in page and the sign-in itself. */
function signInRoutes(app: Hono<{ Variables: { session: string } }>, d: AppDeps): void {
  const want = createHash('sha256').update(d.rest.token).digest();
  app.post('/signin/links', (c) => {
    const given = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(createHash('sha256').update(given).digest(), want))
      return c.json({ error: { kind: 'CapabilityDenied', message: 'a sign-in link needs the REST token', hint: 'run aivyx app' } }, 401);
    return c.json({ url: `${d.url}/signin?code=${d.sessions.mintLink()}` }, 201);
  });
  app.get('/signin', (c) => {
    const code = c.req.query('code') ?? '';
    if (!d.sessions.linkUsable(code)) return c.html(pages.signedOutPage('This sign-in link was already used or has expired.'), 401);
    return c.html(pages.signInPage(code));
  });
  app.post('/signin', bodyLimit({ maxSize: 4096 }), async (c) => {
    if (!sameOrigin(c, d)) return c.html(pages.signedOutPage('Sign-in refused: the form was not sent from this app.'), 403);
    const form = await c.req.parseBody();
    const id = d.sessions.signIn(typeof form.code === 'string' ? form.code : undefined);
    if (!id) return c.html(pages.signedOutPage('This sign-in link was already used or has expired.'), 401);
    setCookie(c, d.cookie, id, { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: d.sessions.maxAgeSeconds });
    return c.redirect('/', 303);
  });
}

/** A signed-in browser only: 401 (JSON for the API, a page that says how to sign in otherwise). */
function requireSession(d: AppDeps): MiddlewareHandler<{ Variables: { session: string } }> {
  return async (c, next) => {
    const id = getCookie(c, d.cookie);
    if (!id || !d.sessions.valid(id)) {
      if (c.req.path.startsWith('/api/') || c.req.path.startsWith('/app/') || c.req.method !== 'GET')
        return c.json({ error: { kind: 'CapabilityDenied', message: 'not signed in', hint: 'run aivyx app for a sign-in link' } }, 401);
      return c.html(pages.signedOutPage('You are not signed in.'), 401);
    }
    c.set('session', id);
    return next();
  };
}

/** Every state change: our Origin and the session's CSRF token (a page of another origin has neither). */
function requireCsrf(d: AppDeps): MiddlewareHandler<{ Variables: { session: string } }> {
  return async (c, next) => {
    if (!UNSAFE_METHODS.has(c.req.method)) return next();
    if (!sameOrigin(c, d) || !d.sessions.csrfMatches(c.get('session'), c.req.header('x-csrf-token')))
      return c.json(
        { error: { kind: 'CapabilityDenied', message: 'cross-site request refused (no CSRF token of this session, or another origin)' } },
        403,
      );
    return next();
  };
}

/** Whether the request's Origin is this app (a loopback name on our port); a missing Origin is not. */
function sameOrigin(c: Context, d: AppDeps): boolean {
  const origin = c.req.header('origin');
  if (!origin || !URL.canParse(origin)) return false;
  const o = new URL(origin);
  return o.protocol === 'http:' && LOOPBACK_HOSTS.has(hostName(o.host)) && o.port === new URL(d.url).port;
}

/** Passes an API call to the REST channel with its token; the answer (a stream too) comes back as is. */
async function toRest(c: Context, d: AppDeps): Promise<Response> {
  const path = c.req.path.slice('/api'.length);
  const query = new URL(c.req.url).search;
  const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? undefined : await c.req.text();
  return relayed(await callRest(d.rest, c.req.method, `${path}${query}`, body, c.req.raw.signal), ['content-type', 'cache-control']);
}

/** The REST channel's answer as ours, with only the headers named (the app sets its own security headers). */
function relayed(res: Response, keep: readonly string[]): Response {
  const headers = new Headers();
  for (const h of keep) if (res.headers.get(h)) headers.set(h, res.headers.get(h)!);
  return new Response(res.body, { status: res.status, headers });
}

/**
 * A file a turn attached, from the REST channel (which serves it only for its own conversation: 404
 * otherwise), with the REST channel's content type and disposition; nosniff and the CSP are added
 * to every answer of the app.
 */
async function attachment(c: Context, d: AppDeps): Promise<Response> {
  const session = c.req.query('session') ?? '';
  const path = `/v1/attachments/${encodeURIComponent(c.req.param('id') ?? '')}?session=${encodeURIComponent(session)}`;
  return relayed(await callRest(d.rest, 'GET', path), ['content-type', 'content-length', 'content-disposition']);
}

/** A reminder from one line: "in 2h" or a local time ("tomorrow 9:00", "17:30"), then the text it says. */
async function createReminder(d: AppDeps, raw: unknown): Promise<{ missionId: string }> {
  const { when, text } = parseBody(reminderBody, raw, 'reminder');
  let wait: object;
  try {
    const w = when.trim();
    wait = /^in\s+/i.test(w) ? waitStepIn(w.replace(/^in\s+/i, '')) : waitStepAt(w, d.timeZone, Date.now());
  } catch (e) {
    throw new AivyxError('Config', (e as Error).message.replace(/^--(in|at) /, ''), {
      hint: 'e.g. in 2h, in 1h30m, tomorrow 9:00, 17:30',
    });
  }
  return restJson(d.rest, 'POST', '/v1/missions', { goal: text, steps: [wait, { notify: text }], capabilities: [] });
}

/** The gate an escalated turn opened (once it shows), and the turn an approval re-runs. */
async function turnGate(d: AppDeps, turn: string): Promise<{ missionId: string; rerun: string; gate?: MissionStatus['gate'] }> {
  if (!/^turn\/rest\/[\w-]{1,200}$/.test(turn)) throw new AivyxError('Config', 'turn must be a turn id of this app (turn/rest/…)');
  const missionId = confirmationMissionId(turn);
  const rerun = confirmationRerunTurnId(turn);
  const deadline = Date.now() + GATE_WAIT_MS;
  for (;;) {
    const status = await restJson<MissionStatus>(d.rest, 'GET', `/v1/missions/${encodeURIComponent(missionId)}`).catch(() => undefined);
    if (status?.gate?.state === 'open' || Date.now() > deadline)
      return { missionId, rerun, ...(status?.gate ? { gate: status.gate } : {}) };
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The pages; each reads through the REST channel and renders on the server. */
function pageRoutes(app: Hono<{ Variables: { session: string } }>, d: AppDeps): void {
  const get = <T>(path: string) => restJson<T>(d.rest, 'GET', path);
  const page = (title: string, render: (c: Context) => Promise<pages.Fragment>, live?: (c: Context) => Promise<pages.Fragment>) => {
    return async (c: Context<{ Variables: { session: string } }>) => {
      if (live && c.req.query('part') === 'live') return c.html(await live(c));
      const body = await render(c).catch((e: unknown) => pages.errorBody(e));
      return c.html(pages.layout({ title, path: c.req.path, csrf: d.sessions.csrfToken(c.get('session')), body }));
    };
  };
  app.get(
    '/',
    page('Chat', async (c) => {
      const asked = c.req.query('session');
      const sessionId = asked && asked !== 'new' && /^[\w-]{1,200}$/.test(asked) ? asked : `app-${randomUUID()}`;
      return pages.chatBody(sessionId, await get<SessionSummary[]>('/v1/sessions').catch(() => []));
    }),
  );
  const approvals = async () => pages.approvalsLive(await waitingGates(d));
  app.get('/approvals', page('Approvals', approvals, approvals));
  const inbox = async () => pages.inboxLive((await get<{ replies: HeldReply[] }>('/v1/inbox')).replies);
  app.get('/inbox', page('Inbox', inbox, inbox));
  const missions = async () =>
    pages.missionsBody(await get<MissionSummary[]>('/v1/missions'), await get<ScheduleRow[]>('/v1/schedules').catch(() => []));
  app.get('/missions', page('Missions', missions, missions));
  app.get(
    '/missions/:id',
    page('Mission', async (c) =>
      pages.missionBody(await get<MissionStatus>(`/v1/missions/${encodeURIComponent(c.req.param('id') ?? '')}`)),
    ),
  );
  app.get(
    '/memory',
    page('Memory', async () => {
      const r = await get<RecallResult>('/v1/memory?limit=100');
      return pages.memoryBody(r.entries, r.more);
    }),
  );
  app.get(
    '/audit',
    page('Audit log', async () =>
      pages.auditBody(
        await get<Record<string, unknown>>('/v1/audit/verify'),
        await get<Parameters<typeof pages.auditBody>[1]>('/v1/audit/tail?n=50'),
        await get<{ vkey?: string }>('/v1/audit/pubkey').catch(() => undefined),
      ),
    ),
  );
}

/** The open gates the owner may decide (as `aivyx approvals` finds them), with the re-run this app knows of. */
async function waitingGates(d: AppDeps): Promise<Array<{ missionId: string; gate: NonNullable<MissionStatus['gate']>; rerun?: string }>> {
  const waiting = await restJson<MissionSummary[]>(d.rest, 'GET', '/v1/missions?state=waiting');
  const out = [];
  for (const m of waiting) {
    const s = await restJson<MissionStatus>(d.rest, 'GET', `/v1/missions/${encodeURIComponent(m.missionId)}`).catch(() => undefined);
    if (s?.gate?.state === 'open' && s.gate.approvers.some((a) => a.identity === 'local-user' && a.channel === 'cli')) {
      const rerun = rerunOf(s.missionId);
      out.push({ missionId: s.missionId, gate: s.gate, ...(rerun ? { rerun } : {}) });
    }
  }
  return out;
}

/**
 * The turn an approved confirmation mission runs its call as: its step 0, second run (the first was
 * the turn that asked; workflows/turn-ids.ts, confirmationRerunTurnId). Other missions: none to follow.
 */
function rerunOf(missionId: string): string | undefined {
  return /^mission-confirm-[0-9a-f]{32}$/.test(missionId) ? `${missionId}/step-0/run-2` : undefined;
}
