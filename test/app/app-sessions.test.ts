/** The app's sign-in links and sessions: a link works once and expires; sessions expire; CSRF tokens are per session. */
import { describe, expect, it } from 'vitest';
import { AppSessions } from '../../channels/app/app-sessions.js';

describe('AppSessions', () => {
  it('a sign-in link opens one session, once; its id is neither the link nor guessable from it', () => {
    const s = new AppSessions();
    const code = s.mintLink();
    expect(s.linkUsable(code)).toBe(true);
    const id = s.signIn(code);
    expect(id).toMatch(/^[\w-]{43}$/);
    expect(id).not.toBe(code);
    expect(s.valid(id)).toBe(true);
    expect(s.linkUsable(code)).toBe(false);
    expect(s.signIn(code)).toBeUndefined();
    expect(s.signIn('never-minted')).toBeUndefined();
    expect(s.signIn(undefined)).toBeUndefined();
  });

  it('links and sessions expire; a session ends on sign-out', async () => {
    const s = new AppSessions(30, 30);
    const late = s.mintLink();
    const id = s.signIn(s.mintLink())!;
    await new Promise((r) => setTimeout(r, 60));
    expect(s.signIn(late)).toBeUndefined();
    expect(s.valid(id)).toBe(false);
    const fresh = new AppSessions();
    const live = fresh.signIn(fresh.mintLink())!;
    fresh.end(live);
    expect(fresh.valid(live)).toBe(false);
  });

  it("a CSRF token matches its own session only, and another server's never", () => {
    const s = new AppSessions();
    const a = s.signIn(s.mintLink())!;
    const b = s.signIn(s.mintLink())!;
    expect(s.csrfMatches(a, s.csrfToken(a))).toBe(true);
    expect(s.csrfMatches(a, s.csrfToken(b))).toBe(false);
    expect(s.csrfMatches(a, undefined)).toBe(false);
    expect(s.csrfMatches(a, '')).toBe(false);
    expect(new AppSessions().csrfToken(a)).not.toBe(s.csrfToken(a));
  });
});
