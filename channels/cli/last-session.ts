/**
 * The REPL's conversation carries on: `aivyx chat` continues the last session it had on this data
 * directory (its id kept in `<home>/cli-session`), unless asked for a new one (`--new`) or another
 * (`--session ID`). A session that closed after a day idle re-opens under the same id, with its history.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'cli-session';
const SESSION_ID = /^[A-Za-z0-9._-]{1,200}$/;

/** The last REPL session's id on `home`, if one was kept (and is still a session id). */
export function lastSession(home: string): string | undefined {
  try {
    const id = readFileSync(join(home, FILE), 'utf8').trim();
    return SESSION_ID.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The session a REPL uses, kept as the last one; `continued` when it carries on the last. */
export function replSession(home: string, opts: { session?: string; fresh?: boolean }): { sessionId: string; continued: boolean } {
  const last = opts.session === undefined && !opts.fresh ? lastSession(home) : undefined;
  const sessionId = opts.session ?? last ?? `cli-${randomUUID()}`;
  try {
    writeFileSync(join(home, FILE), `${sessionId}\n`, { mode: 0o600 });
  } catch {
    // Only the next REPL's convenience is lost.
  }
  return { sessionId, continued: last !== undefined };
}
