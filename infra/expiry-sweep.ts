/**
 * Sealed rows that outlive their use are deleted, not merely refused: expired attachments, held values
 * past their 72 hours, resume records whose gate can no longer be decided. One leased piece of work
 * (a worker's) sweeps each kind now and then every `intervalMs` (six hours by default).
 */

/** One kind of expiring row: what it is called in the log, and its sweep (how many it deleted). */
export interface Expiring {
  what: string;
  sweep(): Promise<number>;
}

/** Sweeps every kind now, then every `intervalMs`; a failure of one kind is logged and the others go on. */
export function startExpirySweep(opts: { kinds: readonly Expiring[]; log: (line: string) => void; intervalMs?: number }): {
  stop(): void;
} {
  const run = async () => {
    for (const kind of opts.kinds) {
      try {
        const n = await kind.sweep();
        if (n > 0) opts.log(`${kind.what}: deleted ${n} expired`);
      } catch (e) {
        opts.log(`${kind.what}: expiry sweep failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  };
  void run();
  const timer = setInterval(() => void run(), opts.intervalMs ?? 6 * 3_600_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
