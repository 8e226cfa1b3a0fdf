/**
 * Keeps `aivyx up`'s dev server running: when the process dies it is started again with backoff,
 * on the same SQLite file and the same ports, so clients and workers connected to its address
 * carry on once it is back (the SDK's connections reconnect by themselves). A server that cannot be
 * brought back (its port taken, a crash at every start, one that dies again at once) is given up on
 * after the backoff schedule, with one message, rather than restarted forever.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { startDevServer, type DevServer, type DevServerExit, type DevServerOptions } from './dev-server.js';

/** Backoff between restart attempts: quick at first, then longer; after the last one the supervisor gives up. */
export const RESTART_BACKOFF_MS = [250, 1_000, 2_000, 5_000, 10_000, 30_000] as const;

/** A restarted server that lives this long has recovered: a later death starts the backoff afresh. */
export const STABLE_AFTER_MS = 60_000;

/** What the supervisor tells its owner. */
export interface DevServerEvents {
  /** The process died (not stopped by us); a restart follows (or `gaveUp`, when the attempts are spent). */
  died(server: DevServer, exit: DevServerExit): void;
  /** A restart attempt failed; another follows after `retryInMs`. */
  restartFailed(err: unknown, retryInMs: number): void;
  /** The server is serving again (a new process on the same address). */
  restarted(server: DevServer, restarts: number): void;
  /** No more restarts: `attempts` in a row failed or died at once; `lastError` is the last start's failure, if any. */
  gaveUp(attempts: number, lastError: unknown): void;
}

/** A dev server under supervision. */
export interface SupervisedDevServer {
  address: string;
  uiUrl: string | undefined;
  /** The process serving now (changes after a restart). */
  current(): DevServer;
  /** Stops supervising and stops the server. */
  stop(): Promise<void>;
}

/**
 * Starts a dev server and restarts it whenever it dies, until `stop()` or until it cannot be brought
 * back (`backoffMs`: the waits before each attempt; a test shortens them).
 */
export async function superviseDevServer(
  opts: DevServerOptions,
  events: DevServerEvents,
  backoffMs: readonly number[] = RESTART_BACKOFF_MS,
): Promise<SupervisedDevServer> {
  let server = await startDevServer(opts);
  // Restarts must come back on the very same address and UI port (the first start may have picked free ones).
  const port = Number(server.address.slice(server.address.lastIndexOf(':') + 1));
  const uiPort = server.uiUrl ? Number(new URL(server.uiUrl).port) : undefined;
  const again: DevServerOptions = { ...opts, port, ...(uiPort === undefined ? {} : { uiPort }) };
  const stopping = new AbortController();
  // One listener for the whole life of the supervisor (one per death would pile up on the signal).
  const stopped = new Promise<undefined>((r) => stopping.signal.addEventListener('abort', () => r(undefined), { once: true }));
  let restarts = 0;
  // Attempts since the server last ran for STABLE_AFTER_MS: a start that fails, or one that dies again soon, counts.
  let attempt = 0;
  let startedAt = Date.now();
  let lastError: unknown;

  // Resolves with the next server, or undefined when stopped or given up.
  const restart = async (): Promise<DevServer | undefined> => {
    for (;;) {
      if (attempt >= backoffMs.length) {
        events.gaveUp(attempt, lastError);
        return undefined;
      }
      await delay(backoffMs[attempt++]!, undefined, { signal: stopping.signal }).catch(() => undefined);
      if (stopping.signal.aborted) return undefined;
      try {
        const next = await startDevServer(again);
        if (!stopping.signal.aborted) return next;
        await next.stop();
        return undefined;
      } catch (err) {
        lastError = err;
        if (attempt < backoffMs.length) events.restartFailed(err, backoffMs[attempt]!);
      }
    }
  };

  const loop = (async () => {
    for (;;) {
      const exit = await Promise.race([server.exited, stopped]);
      if (exit === undefined || stopping.signal.aborted) return;
      events.died(server, exit);
      if (Date.now() - startedAt >= STABLE_AFTER_MS) attempt = 0;
      const next = await restart();
      if (!next) return;
      server = next;
      startedAt = Date.now();
      restarts++;
      events.restarted(server, restarts);
    }
  })();

  return {
    address: server.address,
    uiUrl: server.uiUrl,
    current: () => server,
    stop: async () => {
      stopping.abort();
      await loop;
      await server.stop();
    },
  };
}
