/**
 * Keeps `aivyx up`'s dev server running: when the process dies it is started again with backoff,
 * on the same SQLite file and the same ports, so clients and workers connected to its address
 * carry on once it is back (the SDK's connections reconnect by themselves).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { startDevServer, type DevServer, type DevServerExit, type DevServerOptions } from './dev-server.js';

/** Backoff between restart attempts: quick at first, then at most every 30 s. */
export const RESTART_BACKOFF_MS = [250, 1_000, 2_000, 5_000, 10_000, 30_000] as const;

/** What the supervisor tells its owner. */
export interface DevServerEvents {
  /** The process died (not stopped by us); a restart follows. */
  died(server: DevServer, exit: DevServerExit): void;
  /** A restart attempt failed; another follows after `retryInMs`. */
  restartFailed(err: unknown, retryInMs: number): void;
  /** The server is serving again (a new process on the same address). */
  restarted(server: DevServer, restarts: number): void;
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

/** Starts a dev server and restarts it whenever it dies, until `stop()`. */
export async function superviseDevServer(opts: DevServerOptions, events: DevServerEvents): Promise<SupervisedDevServer> {
  let server = await startDevServer(opts);
  // Restarts must come back on the very same address and UI port (the first start may have picked free ones).
  const port = Number(server.address.slice(server.address.lastIndexOf(':') + 1));
  const uiPort = server.uiUrl ? Number(new URL(server.uiUrl).port) : undefined;
  const again: DevServerOptions = { ...opts, port, ...(uiPort === undefined ? {} : { uiPort }) };
  const stopping = new AbortController();
  let restarts = 0;

  const loop = (async () => {
    for (;;) {
      const exit = await Promise.race([
        server.exited,
        new Promise<undefined>((r) => stopping.signal.addEventListener('abort', () => r(undefined), { once: true })),
      ]);
      if (exit === undefined || stopping.signal.aborted) return;
      events.died(server, exit);
      for (let attempt = 0; ; attempt++) {
        const wait = RESTART_BACKOFF_MS[Math.min(attempt, RESTART_BACKOFF_MS.length - 1)]!;
        await delay(wait, undefined, { signal: stopping.signal }).catch(() => undefined);
        if (stopping.signal.aborted) return;
        try {
          const next = await startDevServer(again);
          if (stopping.signal.aborted) {
            await next.stop();
            return;
          }
          server = next;
          restarts++;
          events.restarted(server, restarts);
          break;
        } catch (err) {
          events.restartFailed(err, RESTART_BACKOFF_MS[Math.min(attempt + 1, RESTART_BACKOFF_MS.length - 1)]!);
        }
      }
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
