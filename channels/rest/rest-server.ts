/**
 * The local REST channel (Trusted: bound to loopback only, bearer token from the data
 * directory). `aivyx chat` talks to `aivyx up` through it.
 *
 *   POST /v1/messages            {text, sessionId?, messageId?, channel?: 'cli'} → SSE stream, last event `outcome`
 *   POST /v1/turns/:id/cancel    cancel a running turn
 *   GET  /v1/audit/verify        chain, tree and witness-file checkpoints: {ok, count, failed?, reason?, ...}
 *   POST /v1/audit/verify        {checkpoint?, source?} → the same, also against the checkpoint(s) given
 *   GET  /v1/audit/tail?n=20     recent audit rows
 *   GET  /v1/audit/pubkey        {vkey, origin, keyId}: the checkpoint verifier key
 *   GET  /v1/audit/prove?seq=N   inclusion proof of entry N against a fresh checkpoint
 *   POST /v1/audit/consistency   {checkpoint} → consistency proof from that checkpoint to a fresh one
 *   GET  /v1/health
 *   POST /v1/missions            {goal, steps?, approvers?, reminderAfter?, expireAfter?, onExpire?} → {missionId}
 *   GET  /v1/missions?state=S    missions by AivyxMissionState (visibility)
 *   GET  /v1/missions/:id        the mission's status query
 *   POST /v1/missions/:id/cancel {reason?}
 *   POST /v1/gates/approve       {gateId, missionId?, reason?}  — as local-user@cli (Trusted)
 *   POST /v1/gates/deny          {gateId, missionId?, reason?}
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChannelFacts } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import { assertMessageFits, MAX_MESSAGE_BYTES } from '../../core/limits.js';
import { textContent } from '../../core/message.js';
import type { MissionGateway, MissionSpec } from '../mission-gateway.js';
import type { TurnGateway } from '../turn-gateway.js';

/** What the REST channel serves besides turns: the audit log (docs/AUDIT.md). */
export interface RestAuditPort {
  /** Chain, tree and checkpoints (the witness file's, plus `checkpoint` text when given). */
  verify(opts?: { checkpoint?: string; source?: string }): Promise<unknown>;
  tail(n: number): Promise<unknown>;
  /** The checkpoint verifier key; routes below answer 404 when the port lacks them. */
  pubkey?(): unknown;
  prove?(seq: number): Promise<unknown>;
  consistency?(checkpoint: string): Promise<unknown>;
}

/** Options for the REST channel. */
export interface RestServerOptions {
  gateway: TurnGateway;
  token: string;
  audit: RestAuditPort;
  /** Serves /v1/missions and /v1/gates when given. */
  missions?: MissionGateway;
  host?: string;
  port?: number;
  info?: Record<string, unknown>;
}

// Room for the JSON envelope around a maximal message.
const MAX_BODY_BYTES = MAX_MESSAGE_BYTES + 64 * 1024;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `request body is ${declared} bytes; the limit is ${MAX_BODY_BYTES}`, 'send a shorter message');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body exceeds ${MAX_BODY_BYTES} bytes`, 'send a shorter message');
    chunks.push(chunk as Buffer);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    throw new HttpError(400, 'request body must be a JSON object');
  }
}

/** An AivyxError as the HTTP error a client should see (bad input 400, unknown 404, denied 403). */
function asHttpError(err: unknown): unknown {
  if (!(err instanceof AivyxError)) return err;
  const status = err.kind === 'Config' ? 400 : err.kind === 'NotFound' ? 404 : err.kind === 'CapabilityDenied' ? 403 : 500;
  return new HttpError(status, err.message, err.hint);
}

function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** Starts the REST channel; resolves with its URL and a stop function. */
export async function startRestServer(opts: RestServerOptions): Promise<{ url: string; server: Server; stop(): Promise<void> }> {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) {
    throw new AivyxError('Config', `the REST channel is Trusted and binds to loopback only, not ${host}`, { hint: 'remote access belongs to a SemiTrusted channel (Telegram, email)' });
  }

  async function handleMessage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    if (typeof body.text !== 'string' || body.text.length === 0) throw new HttpError(400, 'field "text" must be a non-empty string');
    const sessionId = typeof body.sessionId === 'string' && body.sessionId ? body.sessionId : `rest-${randomUUID()}`;
    const messageId = typeof body.messageId === 'string' && body.messageId ? body.messageId : randomUUID();
    const isCli = body.channel === 'cli';
    const facts: ChannelFacts = { name: isCli ? 'cli' : 'rest', platform: isCli ? 'Local' : 'Rest', trustTier: 'Trusted', sessionId, sender: isCli ? 'local-user' : 'rest-client' };
    const message = { id: messageId, sessionId, content: textContent(body.text), receivedAt: Date.now() };
    // Refuse an oversized message while we can still answer with a status code.
    assertMessageFits(message);

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const emit = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    try {
      const turn = await opts.gateway.start(facts, message, (e) => emit(e.type, e));
      emit('turn', { turnWorkflowId: turn.turnWorkflowId, duplicate: turn.duplicate, sessionId });
      emit('outcome', await turn.outcome);
    } catch (err) {
      const e = err instanceof AivyxError ? err.toData() : { kind: 'Internal', message: err instanceof Error ? err.message : String(err) };
      emit('error', e);
    }
    res.end();
  }

  const optString = (body: Record<string, unknown>, key: string): string | undefined => {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw new HttpError(400, `field "${key}" must be a string`);
    return v;
  };

  /** The mission routes; false when `route` is not one of them. */
  async function handleMission(route: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (!route.includes(' /v1/missions') && !route.includes(' /v1/gates/')) return false;
    const m = opts.missions;
    if (!m) throw new HttpError(404, 'missions are not served here');
    try {
      if (route === 'POST /v1/missions') {
        send(res, 201, await m.create((await readJson(req)) as unknown as MissionSpec));
        return true;
      }
      if (route === 'GET /v1/missions') {
        send(res, 200, await m.list(url.searchParams.get('state') ?? undefined));
        return true;
      }
      const decide = /^POST \/v1\/gates\/(approve|deny)$/.exec(route);
      if (decide?.[1]) {
        const body = await readJson(req);
        const gateId = optString(body, 'gateId');
        if (!gateId) throw new HttpError(400, 'field "gateId" must be a non-empty string');
        const reason = optString(body, 'reason');
        const missionId = optString(body, 'missionId');
        send(res, 200, await (decide[1] === 'approve' ? m.approve(gateId, reason, missionId) : m.deny(gateId, reason, missionId)));
        return true;
      }
      const cancel = /^POST \/v1\/missions\/([^/]+)\/cancel$/.exec(route);
      if (cancel?.[1]) {
        await m.cancel(decodeURIComponent(cancel[1]), optString(await readJson(req), 'reason'));
        send(res, 202, { ok: true });
        return true;
      }
      const show = /^GET \/v1\/missions\/([^/]+)$/.exec(route);
      if (show?.[1]) {
        send(res, 200, await m.show(decodeURIComponent(show[1])));
        return true;
      }
    } catch (err) {
      throw asHttpError(err);
    }
    throw new HttpError(404, `no route ${route}`);
  }

  /** The audit routes beyond verify/tail; false when `route` is not one of them. */
  async function handleAudit(route: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const a = opts.audit;
    const need = <T>(fn: T | undefined): T => {
      if (fn === undefined) throw new HttpError(404, `${route} is not served here`);
      return fn;
    };
    try {
      if (route === 'POST /v1/audit/verify') {
        const body = await readJson(req);
        const checkpoint = optString(body, 'checkpoint');
        const source = optString(body, 'source');
        send(res, 200, await a.verify({ ...(checkpoint === undefined ? {} : { checkpoint }), ...(source === undefined ? {} : { source }) }));
      } else if (route === 'GET /v1/audit/pubkey') send(res, 200, await need(a.pubkey)());
      else if (route === 'GET /v1/audit/prove') {
        const seq = Number(url.searchParams.get('seq'));
        if (!Number.isSafeInteger(seq) || seq < 1) throw new HttpError(400, "query \"seq\" must be an entry's sequence number (1, 2, …)");
        send(res, 200, await need(a.prove)(seq));
      }
      else if (route === 'POST /v1/audit/consistency') {
        const checkpoint = optString(await readJson(req), 'checkpoint');
        if (!checkpoint) throw new HttpError(400, 'field "checkpoint" must be the text of a signed checkpoint');
        send(res, 200, await need(a.consistency)(checkpoint));
      } else return false;
      return true;
    } catch (err) {
      throw asHttpError(err);
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = `${req.method} ${url.pathname}`;
    void (async () => {
      try {
        if (route === 'GET /v1/health') return send(res, 200, { ok: true, ...opts.info });
        if (!authorized(req, opts.token)) throw new HttpError(401, 'missing or wrong bearer token', 'the token is in <AIVYX_HOME>/rest-token');
        if (route === 'POST /v1/messages') return await handleMessage(req, res);
        const cancel = /^POST \/v1\/turns\/(.+)\/cancel$/.exec(route);
        if (cancel?.[1]) {
          await opts.gateway.cancel(decodeURIComponent(cancel[1]));
          return send(res, 202, { ok: true });
        }
        if (route === 'GET /v1/audit/verify') return send(res, 200, await opts.audit.verify());
        if (route === 'GET /v1/audit/tail') return send(res, 200, await opts.audit.tail(Math.min(Number(url.searchParams.get('n') ?? 20) || 20, 10_000)));
        if (await handleAudit(route, url, req, res)) return;
        if (await handleMission(route, url, req, res)) return;
        throw new HttpError(404, `no route ${route}`);
      } catch (err) {
        if (res.headersSent) return res.end();
        if (err instanceof HttpError) return send(res, err.status, { error: { message: err.message, hint: err.hint } });
        if (err instanceof AivyxError) return send(res, err.kind === 'Channel' ? 413 : 500, { error: err.toData() });
        return send(res, 500, { error: { message: err instanceof Error ? err.message : String(err) } });
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    server,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
