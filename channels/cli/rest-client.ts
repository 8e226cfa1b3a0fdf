/** The CLI's client for the local REST channel: sends a message or follows a turn, reading the SSE stream. */
import { SseDecoder } from '../../activities/llm/sse.js';
import { AivyxError, isAivyxErrorKind, type AivyxErrorKind } from '../../core/errors.js';

/** One server-sent event, its data parsed. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/** Where the REST channel is and how to authenticate. */
export interface RestTarget {
  url: string;
  token: string;
  /** Where `aivyx chat` saves the files a turn attaches (default: `downloads` in the data directory; channels/cli/attachments.ts). */
  downloads?: string;
}

async function failure(res: Response): Promise<AivyxError> {
  let message = `${res.status} ${res.statusText}`;
  let hint: string | undefined;
  let kind: AivyxErrorKind = 'Channel';
  try {
    const body = (await res.json()) as { error?: { kind?: unknown; message?: string; hint?: string } };
    if (body.error?.message) message = body.error.message;
    if (isAivyxErrorKind(body.error?.kind)) kind = body.error.kind;
    hint = body.error?.hint;
  } catch {
    // not JSON
  }
  return new AivyxError(kind, message, {
    ...(hint ? { hint } : {}),
    detail: { status: res.status, ...(res.status === 503 ? { unavailable: true } : {}) },
  });
}

/** A fetch that says which `aivyx up` it could not reach, and what to do. */
async function request(target: RestTarget, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(`${target.url}${path}`, { ...init, headers: { authorization: `Bearer ${target.token}`, ...init.headers } });
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    throw new AivyxError('Channel', `cannot reach aivyx up at ${target.url}${code ? ` (${code})` : ''}`, {
      hint: 'is `aivyx up` still running? start it again, or pass --standalone to run this command on a stack of its own',
      detail: { unavailable: true, dependency: 'aivyx up' },
      cause: err,
    });
  }
}

async function* events(res: Response): AsyncGenerator<SseEvent> {
  if (!res.body) return;
  const decoder = new SseDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    for (const e of decoder.feed(chunk)) yield { event: e.event, data: JSON.parse(e.data) as unknown };
  }
  for (const e of decoder.end()) yield { event: e.event, data: JSON.parse(e.data) as unknown };
}

/** Posts a message and yields the turn's events as they arrive: `turn` first, the last is `outcome` or `error`. */
export async function* sendMessage(
  target: RestTarget,
  body: { text: string; sessionId: string; messageId?: string; oneShot?: boolean },
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  const res = await request(target, '/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, channel: 'cli' }),
    ...(signal ? { signal } : {}),
  });
  if (!res.ok) throw await failure(res);
  yield* events(res);
}

/** Re-attaches to a running (or ended) turn: `turn`, its remaining events, then `outcome`. */
export async function* turnEvents(target: RestTarget, turnId: string, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  const res = await request(target, `/v1/turns/${encodeURIComponent(turnId)}/events`, { method: 'GET', ...(signal ? { signal } : {}) });
  if (!res.ok) throw await failure(res);
  yield* events(res);
}

/** GET or POST a JSON endpoint of the REST channel (POST with an optional JSON body). */
export async function restJson(target: RestTarget, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const res = await request(target, path, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!res.ok) throw await failure(res);
  return res.json();
}

/** The bytes at a GET endpoint of the REST channel (an attachment). */
export async function restBytes(target: RestTarget, path: string): Promise<Uint8Array> {
  const res = await request(target, path, { method: 'GET' });
  if (!res.ok) throw await failure(res);
  return new Uint8Array(await res.arrayBuffer());
}
