/**
 * The app's one way to the assistant: the local REST channel, called with its token from inside
 * this process. The app adds pages and a session in front; every read and every decision is the
 * REST channel's (the same gateway, the same signed gate Update as every channel).
 */
import { AivyxError, type AivyxErrorData } from '../../core/errors.js';

/** Where the REST channel listens and the token it wants. */
export interface RestLink {
  url: string;
  token: string;
}

/** Sends one request to the REST channel; the response is returned as is (streams stay streams). */
export function callRest(rest: RestLink, method: string, path: string, body?: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${rest.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${rest.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body }),
    ...(signal ? { signal } : {}),
  });
}

/** A JSON answer of the REST channel; its `{error}` body becomes an AivyxError of the same kind. */
export async function restJson<T>(rest: RestLink, method: string, path: string, body?: unknown): Promise<T> {
  const res = await callRest(rest, method, path, body === undefined ? undefined : JSON.stringify(body));
  const parsed = (await res.json().catch(() => ({}))) as { error?: AivyxErrorData };
  if (!res.ok) {
    const e = parsed.error;
    throw new AivyxError(e?.kind ?? 'Internal', e?.message ?? `REST answered ${res.status}`, { ...(e?.hint ? { hint: e.hint } : {}) });
  }
  return parsed as T;
}
