/**
 * The remote codec endpoint the Temporal UI (and `temporal --codec-endpoint`) calls to show decoded
 * payloads: POST /encode and /decode with proto3-JSON Payloads. Loopback only, bearer token
 * required, CORS answered for the UI's origin alone — a decode endpoint is a decryption oracle.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AivyxError } from '../../core/errors.js';

/** Largest request body accepted (Temporal's own per-payload limit is 2 MiB; a batch may hold several). */
export const CODEC_BODY_LIMIT = 8 * 1024 * 1024;

/** Options of `startCodecServer`. */
export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Bearer token every /encode and /decode request must carry. */
  token: string;
  /** Origin(s) of the Temporal UI, e.g. `http://127.0.0.1:8233`; browsers from anywhere else get no CORS grant. */
  allowedOrigin: string | readonly string[];
  host?: string;
  /** Default: any free port. */
  port?: number;
  bodyLimit?: number;
  /** Where `/login` sends the operator afterwards (the Temporal UI). */
  uiUrl?: string;
}

/** A running codec server. */
export interface CodecServer {
  /** Base URL to give the UI (`--ui-codec-endpoint`); the UI appends /decode. */
  url: string;
  stop(): Promise<void>;
}

// Preflights must not need the token: browsers never send credentials on OPTIONS.
const ALLOW_HEADERS = 'x-namespace, content-type, authorization';

/** Starts the codec server; resolves once it listens. */
export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  if (opts.token.length < 16) throw new AivyxError('Config', 'codec server token must be at least 16 characters');
  const origins = new Set(typeof opts.allowedOrigin === 'string' ? [opts.allowedOrigin] : opts.allowedOrigin);
  const host = opts.host ?? '127.0.0.1';
  const limit = opts.bodyLimit ?? CODEC_BODY_LIMIT;
  const expected = digest(opts.token);

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { error: `codec server error: ${(err as Error).message}` }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && origins.has(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    res.setHeader('Vary', 'Origin');
    if (req.method === 'OPTIONS') {
      if (origin !== undefined && origins.has(origin)) {
        res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.writeHead(204).end();
      return;
    }
    const path = new URL(req.url ?? '/', 'http://codec').pathname;
    // The Temporal UI cannot send a bearer token of ours: an operator proves the token once on
    // /login and the browser then carries it as an HttpOnly, SameSite=Strict cookie.
    if (path === '/login') return login(req, res);
    if (!authorized(req.headers.authorization, expected) && !cookieAuthorized(req.headers.cookie, expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="aivyx-codec"');
      send(res, 401, { error: 'missing or wrong bearer token', hint: 'send Authorization: Bearer <contents of $AIVYX_HOME/codec-token>' });
      return;
    }
    // The protocol matches on the last path segment only, so the endpoint may be mounted at any depth.
    const op = path.split('/').pop();
    if (op !== 'encode' && op !== 'decode') return send(res, 404, { error: 'unknown endpoint; use POST /encode or /decode' });
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST, OPTIONS');
      return send(res, 405, { error: `${req.method ?? '?'} not allowed; use POST` });
    }
    const body = await readBody(req, limit);
    if (body === undefined) {
      res.setHeader('Connection', 'close');
      return send(res, 413, { error: `request body over ${limit} bytes` });
    }
    let payloads: Payload[];
    try {
      payloads = parsePayloads(body);
    } catch (err) {
      return send(res, 400, { error: (err as Error).message });
    }
    let out: Payload[];
    try {
      out = op === 'encode' ? await opts.codec.encode(payloads) : await opts.codec.decode(payloads);
    } catch (err) {
      // A codec refusal (unknown key id, failed authentication) is the caller's data, not our fault.
      return send(res, 422, { error: (err as Error).message, ...(err instanceof AivyxError ? { kind: err.kind } : {}) });
    }
    send(res, 200, { payloads: out.map(toJson) });
  }

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'" });
      res.end(LOGIN_PAGE);
      return;
    }
    if (req.method !== 'POST') return send(res, 405, { error: 'use GET or POST /login' });
    const body = await readBody(req, 4096);
    const token = new URLSearchParams(body?.toString('utf8') ?? '').get('token')?.trim() ?? '';
    if (!token || !timingSafeEqual(digest(token), expected)) {
      res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Wrong token: paste the contents of $AIVYX_HOME/codec-token.');
      return;
    }
    res.setHeader('Set-Cookie', `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`);
    if (opts.uiUrl) res.writeHead(303, { Location: opts.uiUrl }).end();
    else res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Signed in: the Temporal UI can now decode payloads.');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

// Comparing fixed-length digests keeps the comparison constant-time whatever the presented length.
function authorized(header: string | undefined, expected: Buffer): boolean {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1] !== undefined && timingSafeEqual(digest(m[1]), expected);
}

const COOKIE = 'aivyx_codec';

function cookieAuthorized(header: string | undefined, expected: Buffer): boolean {
  const value = (header ?? '')
    .split(';')
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1);
  return value !== undefined && value.length > 0 && timingSafeEqual(digest(value), expected);
}

const LOGIN_PAGE = `<!doctype html><meta charset="utf-8"><title>aivyx codec server</title>
<body style="font-family:sans-serif;max-width:40em;margin:3em auto">
<h1>Decode payloads in the Temporal UI</h1>
<p>Paste the token from <code>$AIVYX_HOME/codec-token</code>. Your browser keeps it as a cookie for this
codec server only; then enable <em>Include cross-origin credentials</em> in the UI's codec server settings.</p>
<form method="post"><input name="token" type="password" size="70" autofocus> <button>Sign in</button></form>`;

/** The body, or undefined once it exceeds `limit` (the rest is not buffered). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

// Standard and URL-safe alphabets, padding optional: what proto3 JSON parsers accept.
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function fromBase64(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new Error(`${where} must be a base64 string`);
  return new Uint8Array(Buffer.from(value, 'base64'));
}

/** `{ payloads: [{ metadata: {k: base64}, data: base64 }] }` → Payloads; throws a readable message. */
function parsePayloads(body: Buffer): Payload[] {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new Error('request body is not valid JSON');
  }
  const list = (json as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new Error('request body must be {"payloads": [...]}');
  return list.map((p: unknown, i) => {
    if (typeof p !== 'object' || p === null) throw new Error(`payloads[${i}] must be an object`);
    const { metadata = {}, data = '' } = p as { metadata?: unknown; data?: unknown };
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new Error(`payloads[${i}].metadata must be an object`);
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

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
