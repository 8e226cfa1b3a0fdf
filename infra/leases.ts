/**
 * Leases for what must run once across every gateway: Telegram's getUpdates answers a second
 * poller with 409 Conflict, an IMAP mailbox wants one reader, the audit checkpoints one signer.
 * A lease is a PostgreSQL session advisory lock held on a connection of its own: it lasts exactly
 * as long as that connection, so a gateway that dies (even by SIGKILL) drops it with its socket and
 * another gateway, trying every `retryMs`, takes over within seconds. The holder checks its
 * connection every `retryMs` too and stops its work the moment it cannot (a partition must not
 * leave two pollers). On PGlite there is one process, so the lease is simply held.
 *
 * Any role that can connect to the database can take the same advisory lock and so keep every gateway
 * from polling (a denial of service, not a takeover: the lock gives no access to anything). Give
 * aivyx a database only its own roles reach (docs/DEPLOY.md).
 */
import pg from 'pg';

/** What runs while the lease is held: started on acquire, stopped on loss or `stop()`. */
export type LeasedWork = () => Promise<{ stop(): Promise<void> | void }>;

/** A lease being held or waited for. */
export interface Lease {
  /** Whether this process holds it now. */
  held(): boolean;
  /** Settles after the first attempt (the work started, or another process holds the lease). */
  settled: Promise<void>;
  /** Stops the work (when held), releases the lease and stops trying. */
  stop(): Promise<void>;
}

export interface LeaseOptions {
  /** postgres://… URL; absent for PGlite, where the lease is always held. */
  databaseUrl?: string;
  /** The lease's name, e.g. `channel:telegram` (one lock per name and database). */
  name: string;
  work: LeasedWork;
  /** How often a waiter tries and a holder checks its connection (default 2 s). */
  retryMs?: number;
  log?: (line: string) => void;
}

/** Holds `name` whenever it can and runs `work` while it does. */
export function holdLease(opts: LeaseOptions): Lease {
  const retryMs = opts.retryMs ?? 2_000;
  const log = opts.log ?? (() => undefined);
  let running: { stop(): Promise<void> | void } | undefined;
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let cycle: Promise<void> = Promise.resolve();

  const release = async (why: string | undefined) => {
    const work = running;
    running = undefined;
    const c = client;
    client = undefined;
    if (work) {
      if (why) log(`lease ${opts.name}: lost (${why}); stopping`);
      await Promise.resolve(work.stop()).catch(() => undefined);
    }
    // Closing the connection is what releases the advisory lock.
    await c?.end().catch(() => undefined);
  };

  const start = async () => {
    running = await opts.work();
  };

  const tick = async () => {
    if (stopped) return;
    if (!opts.databaseUrl) {
      // One process: nobody else could hold it. A start that fails is tried again on the next tick.
      if (!running) await start().catch((err: unknown) => log(`lease ${opts.name}: ${(err as Error).message}; trying again`));
      return;
    }
    if (client) {
      // Holding: the connection must still answer, or another gateway may already have the lock.
      try {
        await client.query('select 1');
      } catch (err) {
        await release((err as Error).message);
      }
      return;
    }
    // A holder's machine that vanishes without closing its socket (power loss, a partition) must lose the
    // lock in seconds, not when the OS's 2-hour keepalive notices: keepalives on both ends, and a check
    // that gives up rather than hangs (the holder then stops its work).
    const c = new pg.Client({
      connectionString: opts.databaseUrl,
      keepAlive: true,
      keepAliveInitialDelayMillis: 1_000,
      query_timeout: retryMs,
    });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('set tcp_keepalives_idle = 2; set tcp_keepalives_interval = 1; set tcp_keepalives_count = 3');
      const r = await c.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [`aivyx-lease:${opts.name}`]);
      if (!r.rows[0]?.ok || stopped) {
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      c.on('end', () => {
        if (client === c && !stopped) cycle = cycle.then(() => release('its database connection closed'));
      });
      log(`lease ${opts.name}: acquired`);
      await start();
    } catch (err) {
      log(`lease ${opts.name}: ${(err as Error).message}; trying again in ${Math.round(retryMs / 1000)} s`);
      await release(undefined);
      await c.end().catch(() => undefined);
    }
  };

  const loop = () => {
    cycle = cycle.then(tick).finally(() => {
      if (!stopped) timer = setTimeout(loop, retryMs);
    });
  };
  loop();
  const settled = cycle.catch(() => undefined);
  return {
    settled,
    held: () => running !== undefined,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await cycle.catch(() => undefined);
      await release(undefined);
    },
  };
}
