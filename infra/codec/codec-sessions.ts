/**
 * Sign-in sessions of the codec server. The browser's cookie holds a random id, never the bearer
 * token: cookies ignore the port, so any other service on 127.0.0.1 the browser talks to sees it,
 * and a leaked id dies with its session (or the server) instead of granting the token for good.
 */
import { createHash, randomBytes } from 'node:crypto';

/** How long a sign-in lasts by default: a working day. */
export const CODEC_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** In-memory sessions with expiry; ids are kept only as SHA-256 digests. */
export class CodecSessions {
  // digest(id) → expiry (epoch ms). A lookup by digest leaks nothing about the id through timing.
  private readonly live = new Map<string, number>();

  constructor(private readonly ttlMs: number = CODEC_SESSION_TTL_MS) {}

  /** Starts a session; returns its id (256 random bits, base64url) for the cookie. */
  open(): string {
    this.sweep();
    const id = randomBytes(32).toString('base64url');
    this.live.set(digest(id), Date.now() + this.ttlMs);
    return id;
  }

  /** True when `id` names a session that has not expired. */
  valid(id: string | undefined): boolean {
    if (!id) return false;
    const key = digest(id);
    const expires = this.live.get(key);
    if (expires === undefined) return false;
    if (expires > Date.now()) return true;
    this.live.delete(key);
    return false;
  }

  /** The cookie lifetime in whole seconds (at least 1). */
  get maxAgeSeconds(): number {
    return Math.max(1, Math.ceil(this.ttlMs / 1000));
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, expires] of this.live) if (expires <= now) this.live.delete(k);
  }
}

const digest = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
