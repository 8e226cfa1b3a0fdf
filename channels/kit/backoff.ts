/**
 * Exponential backoff for a channel's receive loop: every channel must survive its platform, Temporal
 * or the database being away for a while without spinning or giving up. A stop wakes a waiting loop.
 */
export interface Backoff {
  /** Waits the current delay (cut short by `wake`), then doubles it up to the cap. */
  wait(): Promise<void>;
  /** The delay the next wait will take, for the log line. */
  readonly next: number;
  /** Back to the initial delay (after a success). */
  reset(): void;
  /** Ends a wait in progress at once (stopping). */
  wake(): void;
}

export function createBackoff(initialMs = 500, maxMs = 30_000): Backoff {
  let delay = initialMs;
  let wakeUp: (() => void) | undefined;
  return {
    get next() {
      return delay;
    },
    async wait() {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wakeUp = undefined;
      delay = Math.min(delay * 2, maxMs);
    },
    reset() {
      delay = initialMs;
    },
    wake() {
      wakeUp?.();
    },
  };
}
