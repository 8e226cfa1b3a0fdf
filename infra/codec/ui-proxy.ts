/**
 * The Temporal UI served under the codec server's own origin. The dev server's UI (2.54) only sends
 * the sign-in cookie cross-origin when its settings say `includeCredentials`, which `temporal
 * server start-dev` cannot set (its UI config carries the codec endpoint alone), and the browser
 * override needs three clicks and the endpoint pasted again. Same-origin fetches carry the cookie
 * by default, so the UI proxied here decodes as soon as the operator has signed in once.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { proxy } from 'hono/proxy';

/** What the proxy needs of the codec server: the UI's address, its cookie, its sessions and its routes. */
export interface UiProxyOptions {
  /** The dev server's own UI, e.g. `http://127.0.0.1:8233`. */
  upstream: string;
  /** The sign-in cookie, never forwarded to the UI. */
  cookie: string;
  /** True when the request carries a live sign-in session. */
  signedIn: (c: Context) => boolean;
  /** True for the codec server's own routes, which stay here. */
  isCodecRoute: (c: Context) => boolean;
}

/**
 * Forwards everything but the codec's own routes to the UI. A page opened without a session is
 * sent to /login first (and back after); a cross-site navigation is not (a SameSite=Strict cookie
 * is withheld from it, so the UI is shown and its own same-origin requests then carry the cookie).
 */
export function uiProxy(opts: UiProxyOptions): MiddlewareHandler {
  const upstream = new URL(opts.upstream);
  return async (c, next) => {
    if (opts.isCodecRoute(c)) return next();
    const url = new URL(c.req.url);
    if (isNavigation(c) && !opts.signedIn(c)) return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
    const target = new URL(url.pathname + url.search, upstream);
    return proxy(target, {
      raw: c.req.raw,
      headers: {
        ...c.req.header(),
        host: upstream.host,
        // The UI needs neither our session nor a bearer token of ours.
        cookie: withoutCookie(c.req.header('cookie'), opts.cookie),
        authorization: undefined,
      },
    });
  };
}

/** A same-site page load (a typed address, a bookmark, a link on this machine's UI). */
function isNavigation(c: Context): boolean {
  return c.req.method === 'GET' && c.req.header('sec-fetch-mode') === 'navigate' && c.req.header('sec-fetch-site') !== 'cross-site';
}

function withoutCookie(header: string | undefined, name: string): string | undefined {
  const kept = (header ?? '')
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith(`${name}=`));
  return kept.length > 0 ? kept.join('; ') : undefined;
}

/** A path on this origin to return to after sign-in, or '/' (never another origin: no open redirect). */
export function localPath(next: string | undefined): string {
  if (!next?.startsWith('/')) return '/';
  // Parsed as a browser parses a Location: `//evil`, `/\evil` or a tab inside resolve to another host.
  const base = 'http://aivyx.invalid';
  const url = URL.canParse(next, base) ? new URL(next, base) : undefined;
  const path = url?.origin === base ? url.pathname + url.search + url.hash : '/';
  // A dot segment can normalize to a leading `//` (`/.//evil`), which is another host again.
  return path.startsWith('//') ? '/' : path;
}
