/**
 * The local REST channel (Trusted: bound to loopback only, answering only to loopback Host
 * names, bearer token from the data directory), on hono. `aivyx chat` and `aivyx mission` talk
 * to `aivyx up` through it. Every route is registered in `registerRoutes` below.
 *
 *   GET  /v1/health                  {ok} (503 while a dependency is down); with the token: each dependency
 *   POST /v1/messages                {text, sessionId?, messageId?, channel?: 'cli'|'rest', oneShot?} → SSE: `turn`, stream events, `outcome`
 *                                    (oneShot: a session it opens closes when the turn ends); text `/clear` runs no
 *                                    turn: it clears the session (as below) → SSE `cleared` {sessionId, text}
 *   GET  /v1/turns?startsWith=P      {turns}: the turn ids that start with P, newest first (short ids)
 *   GET  /v1/turns/:id/events        SSE: re-attach to a turn — `turn`, its remaining events, `outcome`
 *                                    (an `outcome` lists the files its turn attached: `attachments` [{id, name, mime, size, session}])
 *   GET  /v1/attachments/:id?session=S   one of those files (rest-attachments.ts)
 *   POST /v1/turns/:id/cancel        cancel a running turn
 *   GET  /v1/audit/verify            chain, tree, witness-file checkpoints and the tool-call reconciliation: {ok, count, failed?, reason?, ...}
 *   POST /v1/audit/verify            {checkpoint?, source?} → the same, also against the checkpoint given
 *   GET  /v1/audit/tail?n=20         recent audit rows
 *   GET  /v1/audit/pubkey            {vkey, origin, keyId}: the checkpoint verifier key
 *   GET  /v1/audit/prove?seq=N       inclusion proof of entry N against a fresh checkpoint
 *   POST /v1/audit/consistency       {checkpoint} → consistency proof from that checkpoint to a fresh one
 *   POST /v1/missions                {goal, steps?, schedule?, approvers?, secondApprovers?, escalateAfter?, reminderAfter?, expireAfter?, onExpire?, budget?, plan?, capabilities?} → 201 {missionId} (with a schedule: {scheduleId})
 *   GET  /v1/schedules               the recurring missions (paused?, next runs, last run)
 *   POST /v1/schedules/:id/pause|resume, DELETE /v1/schedules/:id   a recurring mission's schedule
 *   GET  /v1/sessions                the open conversations (session workflows Running)
 *   POST /v1/sessions/:id/clear      {channel?: 'cli'|'rest'} → {cleared: true, sessionId, text}: the session's history
 *                                    (the model's context, and the taint it carries) starts empty; memory stays
 *   GET  /v1/missions?state=S        missions by AivyxMissionState (visibility)
 *   GET  /v1/missions/:id            the mission's status query, with `steps` (how many its definition has)
 *   POST /v1/missions/:id/cancel     {reason?}
 *   POST /v1/gates/approve           {gateId, missionId?, reason?}  — as local-user@cli (Trusted)
 *   POST /v1/gates/deny              {gateId, missionId?, reason?}
 *   GET  /v1/specialists             {specialists}: the running specialists (child id, specialist, lead, state)
 *   POST /v1/specialists/:id/stop    stop one running specialist as the owner (needs agent.terminate:<specialist>; audited)
 *
 * Errors are `{error: {kind, message, hint?}}`: 400 bad input (naming the field), 401 token,
 * 404 unknown turn/mission/gate/route, 409 a gate already decided, 413 too large, 421 a Host
 * that is not a loopback name, 503 while Temporal or the database is down.
 */
import type { InboxPort } from '../../activities/ports.js';
import type { MemoryEntry, RecallResult } from '../../activities/tools/memory-port.js';
import type { SkillSummary, StoredSkill } from '../../activities/tools/skill-port.js';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { z } from 'zod';
import type { ChannelFacts } from '../../core/channel.js';
import { assertLoopbackBind, loopbackHostOnly } from '../../infra/http/loopback.js';
import { AivyxError, type AivyxErrorData } from '../../core/errors.js';
import { assertMessageFits, MAX_MESSAGE_BYTES } from '../../core/limits.js';
import { textContent } from '../../core/message.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { describeCause, type Health } from '../../infra/health.js';
import { isTemporalUnreachable } from '../../infra/temporal/client-errors.js';
import { parseMissionSpec } from '../mission-input.js';
import { CLEAR_COMMAND, type LocalMissionPort, type LocalTurnPort } from '../ports.js';
import { ONE_SHOT_IDLE_MS } from '../turn-client.js';
import { parseBody } from '../zod-errors.js';
import { attachmentRoutes, outcomeWithAttachments } from './rest-attachments.js';
import type { AttachmentSource } from '../../activities/tools/attachment-port.js';

/** What the REST channel serves besides turns: the audit log (docs/AUDIT.md). */
export interface RestAuditPort {
  /** Chain, tree and checkpoints (the witness file's, plus `checkpoint` text when given). */
  verify(opts?: { checkpoint?: string; source?: string }): Promise<unknown>;
  tail(n: number): Promise<unknown>;
  /** The checkpoint verifier key; the routes below answer 404 when the port lacks them. */
  pubkey?(): unknown;
  prove?(seq: number): Promise<unknown>;
  consistency?(checkpoint: string): Promise<unknown>;
}

/** Options for the REST channel. */
export interface RestServerOptions {
  gateway: LocalTurnPort;
  token: string;
  audit: RestAuditPort;
  /** Serves /v1/missions and /v1/gates when given. */
  missions?: LocalMissionPort;
  /** Serves /v1/memory when given: the owner's view, scope-checked and audited like the memory tools (app/owner-memory.ts). */
  memory?: {
    list(input: unknown): Promise<RecallResult>;
    show(id: string): Promise<MemoryEntry>;
    forget(id: string): Promise<{ forgotten: number }>;
  };
  /** Serves /v1/inbox when given: replies that could not reach the channel they were asked on. */
  inbox?: Pick<InboxPort, 'list' | 'dismiss'>;
  /** Serves /v1/skills and /v1/graph/predicates when given: the owner's view, scope-checked like the tools (app/owner-skills.ts). */
  skills?: {
    list(): Promise<SkillSummary[]>;
    show(name: string, version?: number): Promise<StoredSkill>;
    retire(name: string): Promise<{ retired: number }>;
    /** A new version waiting at its approval gate (app/owner-skills.ts): nothing is stored until it is approved. */
    edit(
      name: string,
      changes: z.infer<typeof skillEditBody>,
    ): Promise<{ name: string; version: number; missionId: string; gateId: string }>;
    predicates(): Promise<string[]>;
    addPredicate(predicate: string): Promise<{ predicates: string[] }>;
  };
  /** Serves /v1/attachments and lists a turn's files in its `outcome` when given (channels/rest/rest-attachments.ts). */
  attachments?: AttachmentSource;
  /** Serves /v1/specialists when given: the running specialists, and the owner's stop of one (app/owner-specialists.ts). */
  specialists?: {
    list(): Promise<unknown[]>;
    stop(childTurnId: string): Promise<unknown>;
  };
  /** The stack's dependencies (`temporal`, `database`, channels): reported by /v1/health; a request needing one that is down gets 503. */
  health?: Health;
  host?: string;
  port?: number;
  /** Shown by /v1/health to token holders only (e.g. the Temporal UI and address). */
  info?: Record<string, unknown>;
}

// Room for the JSON envelope around a maximal message.
const MAX_BODY_BYTES = MAX_MESSAGE_BYTES + 64 * 1024;
const TOKEN_HINT = 'the token is in <AIVYX_HOME>/rest-token';
/** How long a stream waits for Temporal to come back before giving the turn up to `--follow`. */
const OUTCOME_WAIT_MS = 10 * 60_000;

const messageBody = z
  .object({
    text: z.string().min(1, 'must be a non-empty string'),
    sessionId: z.string().min(1).max(200).optional(),
    messageId: z.string().min(1).max(200).optional(),
    channel: z.enum(['cli', 'rest']).optional(),
    /** One message, no conversation: a session this message opens closes when its turn ends (`aivyx chat -m`). */
    oneShot: z.boolean().optional(),
  })
  .strict();
const gateDecisionBody = z
  .object({
    gateId: z.string().min(1, 'must be a non-empty string'),
    missionId: z.string().min(1).optional(),
    reason: z.string().max(2_000).optional(),
  })
  .strict();
const clearBody = z.object({ channel: z.enum(['cli', 'rest']).optional() }).strict();
const cancelBody = z.object({ reason: z.string().max(2_000).optional() }).strict();
const sessionIdParam = z.string().min(1).max(200);
const turnsQuery = z.object({ startsWith: z.string().min(6).max(300) }).strict();
const tailQuery = z.object({ n: z.coerce.number().int().min(1).max(10_000).default(20) });
const verifyBody = z
  .object({
    checkpoint: z
      .string()
      .max(64 * 1024)
      .optional(),
    source: z.string().max(1024).optional(),
  })
  .strict();
const SEQ = "must be an entry's sequence number (1, 2, …)";
const proveQuery = z.object({ seq: z.coerce.number({ error: SEQ }).int({ error: SEQ }).min(1, { error: SEQ }) });
/** An edit of a skill: the parts it replaces (the tool's own checks run on the whole result). */
const skillEditBody = z.strictObject({
  summary: z.string().optional(),
  whenToUse: z.string().optional(),
  steps: z.array(z.string()).optional(),
  tools: z.array(z.string()).optional(),
});
const predicateBody = z.object({ predicate: z.string({ error: 'must be a lower-case snake_case predicate, e.g. "mentors"' }) });
const consistencyBody = z
  .object({
    checkpoint: z
      .string({ error: 'must be the text of a signed checkpoint' })
      .min(1, { error: 'must be the text of a signed checkpoint' })
      .max(64 * 1024),
  })
  .strict();

/** Compares tokens in constant time (digests, so the length does not leak either). */
/**
 * `mw` for POST requests only: our bodies are POST bodies, and hono's body limit re-wraps a
 * DELETE's empty stream into a Request that @hono/node-server cannot build (an Internal error).
 */
function onlyForPost(mw: MiddlewareHandler): MiddlewareHandler {
  return (c, next) => (c.req.method === 'POST' ? mw(c, next) : next());
}

function sameToken(given: string, want: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(want));
}

function errorBody(e: AivyxErrorData): { error: AivyxErrorData } {
  return { error: e };
}

/** The status a person's request deserves for an error. */
function statusOf(e: AivyxError): 400 | 403 | 404 | 409 | 413 | 500 | 503 | 504 {
  if (e.detail?.unavailable === true) return 503;
  switch (e.kind) {
    case 'Config':
    case 'InvalidScope':
      return 400;
    case 'NotFound':
      return 404;
    case 'CapabilityDenied':
      return e.detail?.conflict === true ? 409 : 403;
    case 'Channel':
      return e.detail?.limit !== undefined ? 413 : 500;
    case 'Timeout':
      return 504;
    default:
      return 500;
  }
}

/** Reads a JSON object body (empty → `{}`). */
async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AivyxError('Config', 'request body must be a JSON object');
  }
}

/**
 * Writes SSE events in order: events that arrive before the stream is open (a turn streams as
 * soon as it is accepted) wait in a buffer; a client that went away stops the writes, not the turn.
 */
class SseRelay {
  private buffer: Array<[string, unknown]> = [];
  private stream: SSEStreamingApi | undefined;
  private chain: Promise<void> = Promise.resolve();

  send(event: string, data: unknown): void {
    if (!this.stream) this.buffer.push([event, data]);
    else this.write(event, data);
  }

  /** Opens the relay on `stream`: `first` goes out before anything buffered. */
  attach(stream: SSEStreamingApi, first: [string, unknown]): void {
    this.stream = stream;
    for (const [event, data] of [first, ...this.buffer]) this.write(event, data);
    this.buffer = [];
  }

  /** Resolves once everything sent so far is written (or the client is gone). */
  flushed(): Promise<void> {
    return this.chain;
  }

  private write(event: string, data: unknown): void {
    const stream = this.stream!;
    this.chain = this.chain
      .then(() => (stream.aborted || stream.closed ? undefined : stream.writeSSE({ event, data: JSON.stringify(data) })))
      .catch(() => undefined);
  }
}

/** What the route handlers share. */
interface RouteDeps extends RestServerOptions {
  /** Throws 503's error while one of `names` is down. */
  need(...names: string[]): void;
}

/** Starts the REST channel; resolves with its URL and a stop function. */
export async function startRestServer(opts: RestServerOptions): Promise<{ url: string; server: Server; stop(): Promise<void> }> {
  const host = opts.host ?? '127.0.0.1';
  // Trusted: remote access belongs to a SemiTrusted channel (Telegram, email).
  assertLoopbackBind(host, 'the REST channel is Trusted and');
  const app = restApp(opts);
  const server = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? 0, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    if (server.listening) resolve();
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open SSE streams would hold close() until their turns end.
        server.closeAllConnections();
      }),
  };
}

/** The hono app of the REST channel (guards, routes, error mapping). */
function restApp(opts: RestServerOptions): Hono {
  const app = new Hono();
  const deps: RouteDeps = { ...opts, need: (...names) => opts.health?.require(...names) };

  // DNS rebinding: a page on evil.example that resolves to 127.0.0.1 still sends its own Host.
  app.use(
    '*',
    loopbackHostOnly((host) =>
      errorBody({
        kind: 'CapabilityDenied',
        message: `Host ${JSON.stringify(host)} is not a loopback name`,
        hint: 'the REST channel answers only to 127.0.0.1, localhost or [::1]',
      }),
    ),
  );
  app.onError((err, c) => {
    if (err instanceof HTTPException) return err.getResponse();
    const e = toAivyxError(err, opts.health);
    return c.json(errorBody(e.toData()), statusOf(e));
  });
  app.notFound((c) => c.json(errorBody({ kind: 'NotFound', message: `no route ${c.req.method} ${c.req.path}` }), 404));
  registerRoutes(app, deps);
  return app;
}

/** What an error thrown by a handler means to the client. */
function toAivyxError(err: unknown, health: Health | undefined): AivyxError {
  if (err instanceof AivyxError) return err;
  if (isTemporalUnreachable(err)) {
    const detail = describeCause(err);
    return health
      ? health.unavailable('temporal', detail, err)
      : new AivyxError('Channel', `Temporal is unreachable: ${detail}`, {
          detail: { dependency: 'temporal', unavailable: true },
          cause: err,
        });
  }
  return new AivyxError('Internal', err instanceof Error ? err.message : String(err), { cause: err });
}

/** Every route of the REST channel, in one place. */
function registerRoutes(app: Hono, d: RouteDeps): void {
  app.get('/v1/health', (c) => {
    const report = d.health?.report() ?? { ok: true, dependencies: {} };
    const status = report.ok ? 200 : 503;
    const header = c.req.header('authorization') ?? '';
    // Without the token: up or not, nothing about what runs where.
    if (!header.startsWith('Bearer ') || !sameToken(header.slice(7), d.token)) return c.json({ ok: report.ok }, status);
    return c.json({ ok: report.ok, dependencies: report.dependencies, ...d.info }, status);
  });

  const message = (kind: string) => ({ error: { kind: 'CapabilityDenied', message: kind, hint: TOKEN_HINT } });
  app.use(
    '/v1/*',
    bearerAuth({
      verifyToken: (given) => sameToken(given, d.token),
      noAuthenticationHeader: { message: message('missing bearer token') },
      invalidAuthenticationHeader: { message: message('malformed Authorization header (want: Bearer <token>)') },
      invalidToken: { message: message('wrong bearer token') },
    }),
    onlyForPost(
      bodyLimit({
        maxSize: MAX_BODY_BYTES,
        onError: (c) =>
          c.json(
            errorBody({ kind: 'Channel', message: `request body exceeds ${MAX_BODY_BYTES} bytes`, hint: 'send a shorter message' }),
            413,
          ),
      }),
    ),
  );

  app.post('/v1/messages', (c) => postMessage(c, d));
  attachmentRoutes(app, d.attachments);
  app.get('/v1/turns', async (c) => {
    d.need('temporal');
    return c.json({ turns: await d.gateway.turnsStartingWith(parseBody(turnsQuery, c.req.query(), 'query').startsWith) });
  });
  app.get('/v1/turns/:id{.+}/events', (c) => followTurn(c, d, c.req.param('id')));
  app.post('/v1/turns/:id{.+}/cancel', async (c) => {
    d.need('temporal');
    await d.gateway.cancel(turnId(c.req.param('id')));
    return c.json({ ok: true }, 202);
  });

  app.get('/v1/audit/verify', async (c) => {
    d.need('database');
    return c.json(await d.audit.verify());
  });
  app.post('/v1/audit/verify', async (c) => {
    d.need('database');
    const { checkpoint, source } = parseBody(verifyBody, await jsonBody(c), 'request');
    return c.json(
      await d.audit.verify({ ...(checkpoint === undefined ? {} : { checkpoint }), ...(source === undefined ? {} : { source }) }),
    );
  });
  app.get('/v1/audit/tail', async (c) => {
    d.need('database');
    const { n } = parseBody(tailQuery, c.req.query(), 'query');
    return c.json(await d.audit.tail(n));
  });
  const auditOp = <K extends 'pubkey' | 'prove' | 'consistency'>(name: K): NonNullable<RestAuditPort[K]> => {
    const op = d.audit[name];
    if (!op) throw new AivyxError('NotFound', `audit ${name} is not served here`);
    d.need('database');
    return op.bind(d.audit) as NonNullable<RestAuditPort[K]>;
  };
  app.get('/v1/audit/pubkey', async (c) => c.json(await auditOp('pubkey')()));
  app.get('/v1/audit/prove', async (c) => c.json(await auditOp('prove')(parseBody(proveQuery, c.req.query(), 'query').seq)));
  app.post('/v1/audit/consistency', async (c) =>
    c.json(await auditOp('consistency')(parseBody(consistencyBody, await jsonBody(c), 'request').checkpoint)),
  );

  const missions = (): LocalMissionPort => {
    if (!d.missions) throw new AivyxError('NotFound', 'missions are not served here');
    d.need('temporal');
    return d.missions;
  };
  const memory = () => {
    if (!d.memory) throw new AivyxError('NotFound', 'memory is not served here');
    d.need('database');
    return d.memory;
  };
  app.get('/v1/memory', async (c) => {
    const q = c.req.query();
    const limit = q.limit === undefined ? undefined : Number(q.limit);
    return c.json(
      await memory().list({
        ...(q.query ? { query: q.query } : {}),
        ...(q.topic ? { topic: q.topic } : {}),
        ...(q.session ? { session: q.session } : {}),
        ...(limit === undefined ? {} : { limit }),
      }),
    );
  });
  app.get('/v1/memory/:id', async (c) => c.json(await memory().show(c.req.param('id'))));
  app.post('/v1/memory/:id/forget', async (c) => c.json(await memory().forget(c.req.param('id'))));
  const skills = () => {
    if (!d.skills) throw new AivyxError('NotFound', 'skills are not served here');
    d.need('database');
    return d.skills;
  };
  app.get('/v1/skills', async (c) => c.json({ skills: await skills().list() }));
  app.get('/v1/skills/:name', async (c) => {
    const v = c.req.query('version');
    return c.json(await skills().show(c.req.param('name'), v === undefined ? undefined : Number(v)));
  });
  app.post('/v1/skills/:name/retire', async (c) => c.json(await skills().retire(c.req.param('name'))));
  app.post('/v1/skills/:name/edit', async (c) =>
    c.json(await skills().edit(c.req.param('name'), parseBody(skillEditBody, await jsonBody(c), 'request')), 202),
  );
  app.get('/v1/graph/predicates', async (c) => c.json({ predicates: await skills().predicates() }));
  app.post('/v1/graph/predicates', async (c) =>
    c.json(await skills().addPredicate(parseBody(predicateBody, await jsonBody(c), 'request').predicate)),
  );
  const inbox = () => {
    if (!d.inbox) throw new AivyxError('NotFound', 'the inbox is not served here');
    d.need('database');
    return d.inbox;
  };
  app.get('/v1/inbox', async (c) => c.json({ replies: await inbox().list() }));
  app.post('/v1/inbox/:id/dismiss', async (c) => c.json({ dismissed: await inbox().dismiss(c.req.param('id')) }));
  const specialists = () => {
    if (!d.specialists) throw new AivyxError('NotFound', 'specialists are not served here');
    d.need('temporal');
    return d.specialists;
  };
  app.get('/v1/specialists', async (c) => c.json({ specialists: await specialists().list() }));
  app.post('/v1/specialists/:id{.+}/stop', async (c) => {
    const s = specialists();
    d.need('database');
    return c.json(await s.stop(c.req.param('id')), 202);
  });
  app.post('/v1/missions', async (c) => {
    const spec = parseMissionSpec(await jsonBody(c));
    return c.json(spec.schedule ? await missions().schedule(spec) : await missions().create(spec), 201);
  });
  app.get('/v1/schedules', async (c) => c.json(await missions().schedules()));
  app.post('/v1/schedules/:id/:action{pause|resume}', async (c) =>
    c.json(await missions().scheduleAction(c.req.param('id'), c.req.param('action') as 'pause' | 'resume')),
  );
  app.delete('/v1/schedules/:id', async (c) => c.json(await missions().scheduleAction(c.req.param('id'), 'delete')));
  app.get('/v1/sessions', async (c) => c.json(await d.gateway.sessions()));
  app.post('/v1/sessions/:id/clear', async (c) => {
    const sessionId = parseBody(sessionIdParam, c.req.param('id'), 'session id');
    const { channel } = parseBody(clearBody, await jsonBody(c), 'request', 'fields: channel (cli or rest)');
    d.need('database');
    const { text } = await d.gateway.clearSession(localFacts(channel, sessionId), randomUUID());
    return c.json({ cleared: true, sessionId, text });
  });
  app.get('/v1/missions', async (c) => c.json(await missions().list(c.req.query('state'))));
  app.get('/v1/missions/:id', async (c) => c.json(await missions().show(c.req.param('id'))));
  app.post('/v1/missions/:id/cancel', async (c) => {
    const m = missions();
    await m.cancel(c.req.param('id'), parseBody(cancelBody, await jsonBody(c), 'request').reason);
    return c.json({ ok: true }, 202);
  });
  app.post('/v1/gates/:decision{approve|deny}', async (c) => {
    const m = missions();
    const body = parseBody(gateDecisionBody, await jsonBody(c), 'gate decision');
    const decide = c.req.param('decision') === 'approve' ? m.approve.bind(m) : m.deny.bind(m);
    return c.json(await decide(body.gateId, body.reason, body.missionId));
  });
}

/**
 * A turn id from a path: a channel's turn (`turn/<channel>/<message id>`), or the re-run of an approved
 * call (`mission-confirm-<hash>/step-<n>/run-<n>`), which the REPL follows after an inline approval.
 */
function turnId(raw: string): string {
  if (!/^turn\/[^\s/]+\/\S{1,300}$/.test(raw) && !/^mission-confirm-[0-9a-f]{32}\/step-\d{1,6}\/run-\d{1,6}$/.test(raw))
    throw new AivyxError('Config', `"${raw}" is not a turn id`, {
      hint: 'turn ids look like turn/cli/<uuid>; aivyx chat prints one when a turn is accepted',
    });
  return raw;
}

/** The facts of a message on the local channels: `aivyx chat` (cli, local-user) or a REST client. */
function localFacts(channel: 'cli' | 'rest' | undefined, sessionId: string): ChannelFacts {
  const isCli = channel === 'cli';
  return {
    name: isCli ? 'cli' : 'rest',
    platform: isCli ? 'Local' : 'Rest',
    trustTier: 'Trusted',
    sessionId,
    sender: isCli ? 'local-user' : 'rest-client',
  };
}

/** POST /v1/messages: starts a turn, then streams it. Bad input, a too-large message or a dependency that is down answer before any turn starts. */
async function postMessage(c: Context, d: RouteDeps): Promise<Response> {
  const body = parseBody(messageBody, await jsonBody(c), 'message', 'fields: text, sessionId, messageId, channel (cli or rest), oneShot');
  const sessionId = body.sessionId ?? `rest-${randomUUID()}`;
  const facts = localFacts(body.channel, sessionId);
  if (body.text.trim() === CLEAR_COMMAND) {
    d.need('database');
    const { text } = await d.gateway.clearSession(facts, body.messageId ?? randomUUID());
    return streamSSE(c, (stream) => stream.writeSSE({ event: 'cleared', data: JSON.stringify({ sessionId, text }) }));
  }
  const message = { id: body.messageId ?? randomUUID(), sessionId, content: textContent(body.text), receivedAt: Date.now() };
  // Refuse an oversized message while we can still answer with a status code.
  assertMessageFits(message);
  d.need('temporal', 'database');
  const relay = new SseRelay();
  const turn = await d.gateway.start(
    facts,
    message,
    (e) => relay.send(e.type, e),
    undefined,
    body.oneShot ? { idleMs: ONE_SHOT_IDLE_MS } : undefined,
  );
  return streamSSE(c, async (stream) => {
    relay.attach(stream, ['turn', { turnWorkflowId: turn.turnWorkflowId, duplicate: turn.duplicate, sessionId }]);
    await finish(relay, d, turn.turnWorkflowId, turn.outcome);
  });
}

/** GET /v1/turns/:id/events: the rest of a turn that outlived its first client. */
async function followTurn(c: Context, d: RouteDeps, raw: string): Promise<Response> {
  const id = turnId(raw);
  d.need('temporal');
  const relay = new SseRelay();
  const followed = await d.gateway.follow(id, (e) => relay.send(e.type, e));
  return streamSSE(c, async (stream) => {
    relay.attach(stream, ['turn', { turnWorkflowId: id, status: followed.status, followed: true }]);
    await finish(relay, d, id, followed.outcome);
  });
}

/**
 * Streams a turn to its end: its outcome, waiting through a Temporal outage (the dev server is
 * being restarted) rather than dropping the client; past that, an `error` event says how to
 * follow the turn later.
 */
async function finish(relay: SseRelay, d: RouteDeps, id: string, first: Promise<TurnOutcome>): Promise<void> {
  let pending = first;
  for (;;) {
    try {
      relay.send('outcome', await outcomeWithAttachments(d.attachments, id, await pending));
      break;
    } catch (err) {
      if (isTemporalUnreachable(err) && d.health) {
        relay.send('status', { type: 'status', text: 'Temporal is unavailable; waiting for it to come back (the turn keeps running)' });
        if (await d.health.waitUp('temporal', OUTCOME_WAIT_MS)) {
          pending = d.gateway.outcome(id);
          continue;
        }
      }
      const e = toAivyxError(err, d.health);
      relay.send('error', {
        ...e.toData(),
        hint: `${e.hint ? `${e.hint}; ` : ''}the turn goes on without this stream: \`aivyx chat --follow ${id}\` shows its outcome`,
      });
      break;
    }
  }
  await relay.flushed();
}
