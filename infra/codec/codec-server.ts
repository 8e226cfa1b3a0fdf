/**
 * The remote codec endpoint the Temporal UI (and `temporal --codec-endpoint`) calls to show decoded
 * payloads: POST /encode and /decode with proto3-JSON Payloads, on hono. Loopback only (bind
 * address and Host header), bearer token or a signed-in session required, CORS answered for the
 * UI's origins alone — a decode endpoint is a decryption oracle.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { AivyxError } from '../../core/errors.js';
import { assertLoopbackBind, loopbackHostOnly } from '../http/loopback.js';
import { CodecSessions } from './codec-sessions.js';
import { localPath, uiProxy } from './ui-proxy.js';

/** Largest request body accepted (Temporal's own per-payload limit is 2 MiB; a batch may hold several). */
export const CODEC_BODY_LIMIT = 8 * 1024 * 1024;

/** Options of `startCodecServer`. */
export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Bearer token every /encode and /decode request must carry (or have signed in with on /login). */
  token: string;
  /** Origin(s) of the Temporal UI, e.g. `http://127.0.0.1:8233`; browsers from anywhere else get no CORS grant. */
  allowedOrigin: string | readonly string[];
  /** A loopback address (default 127.0.0.1); anything else is refused. */
  host?: string;
  /** Default: any free port. */
  port?: number;
  bodyLimit?: number;
  /** Where `/login` sends the operator afterwards (the Temporal UI), when the UI is not served here. */
  uiUrl?: string;
  /**
   * The dev server's own UI (e.g. `http://127.0.0.1:8233`) to serve under this server's origin: its
   * decode requests are then same-origin and carry the sign-in cookie with no UI setting (ui-proxy.ts).
   */
  uiUpstream?: string;
  /** How long a sign-in session lasts (default 12 h). */
  sessionTtlMs?: number;
}

/** A running codec server. */
export interface CodecServer {
  /** Base URL to give the UI (`--ui-codec-endpoint`); the UI appends /decode. */
  url: string;
  stop(): Promise<void>;
}

// Preflights must not need the token: browsers never send credentials on OPTIONS.
const ALLOW_HEADERS = ['x-namespace', 'content-type', 'authorization'];
const COOKIE = 'aivyx_codec';
const TOKEN_HINT = 'send Authorization: Bearer <contents of $AIVYX_HOME/codec-token>, or sign in on /login';

/** Starts the codec server; resolves once it listens. */
export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  if (opts.token.length < 16) throw new AivyxError('Config', 'codec server token must be at least 16 characters');
  const host = opts.host ?? '127.0.0.1';
  assertLoopbackBind(host, 'the codec server (a decryption oracle)');
  const app = codecApp(opts);
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new AivyxError('Config', `the codec server cannot listen on ${host}:${opts.port ?? 0}: the port is in use`, {
              hint: 'set AIVYX_CODEC_PORT to a free port (0: any free port), or stop what holds it',
              cause: err,
            })
          : err,
      ),
    );
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The hono app: guards (Host, CORS), /login, then auth, body limit and the codec endpoints. */
function codecApp(opts: CodecServerOptions): Hono {
  const origins = new Set(typeof opts.allowedOrigin === 'string' ? [opts.allowedOrigin] : opts.allowedOrigin);
  const limit = opts.bodyLimit ?? CODEC_BODY_LIMIT;
  const expected = digest(opts.token);
  // The token is only ever compared as fixed-length digests, in constant time.
  const isToken = (given: string): boolean => timingSafeEqual(digest(given), expected);
  const sessions = new CodecSessions(opts.sessionTtlMs);
  const app = new Hono();

  app.use(
    '*',
    loopbackHostOnly((h) => ({
      error: `Host ${JSON.stringify(h)} is not a loopback name`,
      hint: 'the codec server answers only to 127.0.0.1, localhost or [::1]',
    })),
  );
  app.use('*', uiCors(origins));
  // A preflight from anywhere gets an empty 204 (a foreign origin simply no grant), never a 401.
  app.options('*', (c) => c.body(null, 204));

  // The Temporal UI cannot send a bearer token of ours: an operator proves the token once on
  // /login, and the browser then carries a session id as an HttpOnly, SameSite=Strict cookie.
  app.get('/login', (c) => {
    c.header('Content-Security-Policy', loginPolicy(opts));
    return c.html(LOGIN_PAGE);
  });
  app.post('/login', bodyLimit({ maxSize: 4096, onError: (c) => tooLarge(c, 4096) }), async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    if (!token || !isToken(token)) return c.text('Wrong token: paste the contents of $AIVYX_HOME/codec-token.', 401);
    setCookie(c, COOKIE, sessions.open(), { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: sessions.maxAgeSeconds });
    if (opts.uiUpstream) return c.redirect(localPath(c.req.query('next')), 303);
    return opts.uiUrl ? c.redirect(opts.uiUrl, 303) : c.text('Signed in: the Temporal UI can now decode payloads.');
  });
  app.all('/login', (c) => c.json({ error: 'use GET or POST /login' }, 405));
  if (opts.uiUpstream) {
    const upstream = opts.uiUpstream;
    app.use(
      '*',
      uiProxy({
        upstream,
        cookie: COOKIE,
        signedIn: (c) => sessions.valid(getCookie(c, COOKIE)),
        // Only the root endpoints are ours: a UI path may well end in /decode (a workflow named so).
        isCodecRoute: (c) => c.req.path === '/encode' || c.req.path === '/decode',
      }),
    );
  }

  app.use('*', signedIn(sessions, isToken), bodyLimit({ maxSize: limit, onError: (c) => tooLarge(c, limit) }));
  // The protocol matches on the last path segment only, so the endpoint may be mounted at any depth.
  app.all('*', async (c) => {
    const op = c.req.path.split('/').pop();
    if (op !== 'encode' && op !== 'decode') return c.json({ error: 'unknown endpoint; use POST /encode or /decode' }, 404);
    if (c.req.method !== 'POST') {
      c.header('Allow', 'POST, OPTIONS');
      return c.json({ error: `${c.req.method} not allowed; use POST` }, 405);
    }
    let payloads: Payload[];
    try {
      payloads = parsePayloads(await c.req.text());
    } catch (err) {
      return c.json({ error: (err as Error).message }, 400);
    }
    try {
      const out = op === 'encode' ? await opts.codec.encode(payloads) : await opts.codec.decode(payloads);
      return c.json({ payloads: out.map(toJson) });
    } catch (err) {
      // A codec refusal (unknown key id, failed authentication) is the caller's data, not our fault.
      return c.json({ error: (err as Error).message, ...(err instanceof AivyxError ? { kind: err.kind } : {}) }, 422);
    }
  });
  app.onError((err, c) =>
    err instanceof HTTPException ? err.getResponse() : c.json({ error: `codec server error: ${err.message}` }, 500),
  );
  return app;
}

/**
 * The sign-in page may only submit to itself, and the form's 303 may only lead back here or to the
 * UI's origin: `form-action` also governs the redirect after a submission (a plain `'self'` made
 * the browser stop on /login when the UI lives on another port).
 */
function loginPolicy(opts: CodecServerOptions): string {
  const target = !opts.uiUpstream && opts.uiUrl && URL.canParse(opts.uiUrl) ? ` ${new URL(opts.uiUrl).origin}` : '';
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${target}; frame-ancestors 'none'`;
}

/** CORS with credentials for the UI origins only (never `*`); other origins get no CORS headers at all. */
function uiCors(origins: ReadonlySet<string>): MiddlewareHandler {
  const grant = cors({
    origin: (o) => (origins.has(o) ? o : null),
    credentials: true,
    allowMethods: ['POST', 'OPTIONS'],
    allowHeaders: ALLOW_HEADERS,
    maxAge: 600,
  });
  return async (c, next) => {
    if (origins.has(c.req.header('origin') ?? '')) return grant(c, next);
    await next();
    // The answer differs by Origin: caches must not hand a granted response to another origin.
    c.header('Vary', 'Origin', { append: true });
  };
}

/** A valid session cookie, else a bearer token; 401 with a hint otherwise. */
function signedIn(sessions: CodecSessions, isToken: (t: string) => boolean): MiddlewareHandler {
  const refusal = (c: Context) => c.json({ error: 'missing or wrong bearer token', hint: TOKEN_HINT }, 401);
  const bearer = bearerAuth({
    verifyToken: (t) => isToken(t),
    realm: 'aivyx-codec',
    noAuthenticationHeader: { message: refusal },
    // A malformed header (another scheme, no token) is as unauthenticated as none: 401, not 400.
    invalidAuthenticationHeader: { message: refusal },
    invalidToken: { message: refusal },
  });
  return async (c, next) => (sessions.valid(getCookie(c, COOKIE)) ? next() : bearer(c, next));
}

function tooLarge(c: Context, limit: number): Response {
  // Closing the connection spares reading the rest of an oversized upload.
  c.header('Connection', 'close');
  return c.json({ error: `request body over ${limit} bytes` }, 413);
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

const LOGIN_PAGE = `<!doctype html><meta charset="utf-8"><title>aivyx codec server</title>
<body style="font-family:sans-serif;max-width:40em;margin:3em auto">
<h1>Decode payloads in the Temporal UI</h1>
<p>Paste the token from <code>$AIVYX_HOME/codec-token</code>. Your browser keeps a session for this codec
server (a random id in a cookie, never the token) for 12 hours, and the Temporal UI at this address shows payloads decoded.</p>
<form method="post"><input name="token" type="password" size="70" autofocus> <button>Sign in</button></form>`;

// Standard and URL-safe alphabets, padding optional: what proto3 JSON parsers accept.
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function fromBase64(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new Error(`${where} must be a base64 string`);
  return new Uint8Array(Buffer.from(value, 'base64'));
}

/** `{ payloads: [{ metadata: {k: base64}, data: base64 }] }` → Payloads; throws a readable message. */
function parsePayloads(body: string): Payload[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error('request body is not valid JSON');
  }
  const list = (json as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new Error('request body must be {"payloads": [...]}');
  return list.map((p: unknown, i) => {
    if (typeof p !== 'object' || p === null) throw new Error(`payloads[${i}] must be an object`);
    const { metadata = {}, data = '' } = p as { metadata?: unknown; data?: unknown };
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
      throw new Error(`payloads[${i}].metadata must be an object`);
    const meta: Record<string, Uint8Array> = {};
    for (const [k, v] of Object.entries(metadata)) meta[k] = fromBase64(v, `payloads[${i}].metadata.${k}`);
    return { metadata: meta, data: fromBase64(data, `payloads[${i}].data`) };
  });
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}
