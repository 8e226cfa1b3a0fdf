/** The CLI's client for the local REST channel: sends a message and reads the SSE stream. */
import { AivyxError } from '../../core/errors.js';

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/** Where the REST channel is and how to authenticate. */
export interface RestTarget {
  url: string;
  token: string;
}

async function failure(res: Response): Promise<AivyxError> {
  let message = `${res.status} ${res.statusText}`;
  let hint: string | undefined;
  try {
    const body = (await res.json()) as { error?: { message?: string; hint?: string } };
    if (body.error?.message) message = body.error.message;
    hint = body.error?.hint;
  } catch {
    // not JSON
  }
  return new AivyxError('Channel', message, hint ? { hint } : {});
}

/** Posts a message and yields the turn's events as they arrive; the last is `outcome` or `error`. */
export async function* sendMessage(target: RestTarget, body: { text: string; sessionId: string; messageId?: string }, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  const res = await fetch(`${target.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, channel: 'cli' }),
    ...(signal ? { signal } : {}),
  });
  if (!res.ok || !res.body) throw await failure(res);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1];
      yield { event, data: data === undefined ? null : (JSON.parse(data) as unknown) };
    }
  }
}

/** GET or POST a JSON endpoint of the REST channel (POST with an optional JSON body). */
export async function restJson(target: RestTarget, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw await failure(res);
  return res.json();
}
