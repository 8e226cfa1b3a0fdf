/**
 * The REPL's ear on the owner's inbox: mission notices (a reminder, a recurring mission's result)
 * and replies that could not reach their chat arrive there while the owner types. Every few
 * seconds it asks the REST channel for entries newer than the REPL's start and hands each new one
 * to `show` once; a failed poll (aivyx up restarting) is simply tried again on the next tick.
 */
import type { HeldReply } from '../../activities/ports.js';
import { restJson, type RestTarget } from './rest-client.js';

/** How often the REPL looks. */
export const INBOX_POLL_MS = 2_000;

/** Starts watching; returns a function that stops it. */
export function watchInbox(target: () => RestTarget, show: (r: HeldReply) => void, since = Date.now()): () => void {
  const seen = new Set<string>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    try {
      const { replies } = (await restJson(target(), 'GET', '/v1/inbox')) as { replies: HeldReply[] };
      for (const r of replies) {
        if (r.at < since || seen.has(r.id)) continue;
        seen.add(r.id);
        if (!stopped) show(r);
      }
    } catch {
      // aivyx up is away for a moment: the next tick asks again.
    }
    if (!stopped) timer = setTimeout(() => void tick(), INBOX_POLL_MS);
  };
  timer = setTimeout(() => void tick(), INBOX_POLL_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
