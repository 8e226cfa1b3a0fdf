/**
 * Loopback-only HTTP servers: a bind address check, and a hono guard that answers only requests
 * whose Host is a loopback name — a page on evil.example whose DNS points at 127.0.0.1 (DNS
 * rebinding) still sends its own Host, so it never reaches the handlers.
 */
import type { MiddlewareHandler } from 'hono';
import { AivyxError } from '../../core/errors.js';

/** Addresses a loopback-only server may bind to. */
export const LOOPBACK_BINDS: ReadonlySet<string> = new Set(['127.0.0.1', '::1', 'localhost']);
/** Host names (as URL parsing gives them) a loopback-only server answers to. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Throws Config unless `host` is a loopback bind address; `what` names the server in the message. */
export function assertLoopbackBind(host: string, what: string): void {
  if (!LOOPBACK_BINDS.has(host))
    throw new AivyxError('Config', `${what} binds to loopback only, not ${host}`, { hint: 'use 127.0.0.1, ::1 or localhost' });
}

/** The host name of a Host header value (port and case dropped); '' when it does not parse. */
export function hostName(header: string): string {
  return URL.canParse(`http://${header}`) ? new URL(`http://${header}`).hostname : '';
}

/** Middleware answering 421 (with a JSON `{ error }` from `refusal`) to any Host that is not a loopback name. */
export function loopbackHostOnly(refusal: (host: string) => object): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!LOOPBACK_HOSTS.has(hostName(host))) return c.json(refusal(host), 421);
    return next();
  };
}
