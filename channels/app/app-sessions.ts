/**
 * Who may use the owner's app: single-use sign-in links (minted for whoever holds the REST token,
 * i.e. `aivyx app` on this machine) and the browser sessions they open. The cookie holds a random
 * session id, never the REST token; ids and link codes are kept only as SHA-256 digests, so a
 * lookup leaks nothing through timing and a memory dump holds nothing to replay. Each session's
 * CSRF token is an HMAC of its id under a key of this process: a page of ours can read it, a page
 * of another origin (even another port on 127.0.0.1, which shares our cookies) cannot.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a sign-in link may wait to be used: long enough to switch to the browser. */
export const SIGNIN_LINK_TTL_MS = 10 * 60_000;
/** How long a signed-in session lasts: a working day. */
export const APP_SESSION_TTL_MS = 12 * 60 * 60_000;

const digest = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const random = (): string => randomBytes(32).toString('base64url');

/** Sign-in links and sessions of one app server (in memory: a restart signs everyone out). */
export class AppSessions {
  // digest → expiry (epoch ms)
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  private readonly csrfKey = randomBytes(32);

  constructor(
    private readonly sessionTtlMs = APP_SESSION_TTL_MS,
    private readonly linkTtlMs = SIGNIN_LINK_TTL_MS,
  ) {}

  /** A new single-use sign-in code (256 random bits). */
  mintLink(): string {
    sweep(this.links);
    const code = random();
    this.links.set(digest(code), Date.now() + this.linkTtlMs);
    return code;
  }

  /** Whether `code` is a link not yet used nor expired (does not use it). */
  linkUsable(code: string | undefined): boolean {
    return live(this.links, code);
  }

  /** Uses `code` up and opens a session; undefined when the code was used, expired or never minted. */
  signIn(code: string | undefined): string | undefined {
    if (!live(this.links, code)) return undefined;
    this.links.delete(digest(code!));
    sweep(this.sessions);
    const id = random();
    this.sessions.set(digest(id), Date.now() + this.sessionTtlMs);
    return id;
  }

  /** Whether `id` names a live session. */
  valid(id: string | undefined): boolean {
    return live(this.sessions, id);
  }

  /** Ends a session (sign out). */
  end(id: string | undefined): void {
    if (id) this.sessions.delete(digest(id));
  }

  /** The CSRF token of session `id`. */
  csrfToken(id: string): string {
    return createHmac('sha256', this.csrfKey).update(id).digest('base64url');
  }

  /** Whether `given` is session `id`'s CSRF token (constant time). */
  csrfMatches(id: string, given: string | undefined): boolean {
    if (!given) return false;
    const want = Buffer.from(this.csrfToken(id));
    const got = Buffer.from(given);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** The cookie lifetime in whole seconds. */
  get maxAgeSeconds(): number {
    return Math.max(1, Math.ceil(this.sessionTtlMs / 1000));
  }
}

function live(map: Map<string, number>, secret: string | undefined): boolean {
  if (!secret) return false;
  const key = digest(secret);
  const expires = map.get(key);
  if (expires === undefined) return false;
  if (expires > Date.now()) return true;
  map.delete(key);
  return false;
}

function sweep(map: Map<string, number>): void {
  const now = Date.now();
  for (const [k, expires] of map) if (expires <= now) map.delete(k);
}
