/**
 * The durable cursor loop of a polling channel: fetch what is after the stored cursor, hand each item
 * to the channel, and move the cursor past an item only once it was handled. A crash re-fetches what
 * was not handled, and the channel's ingest-once marks (see ingest-once.ts) keep that from running
 * twice. A fetch or a handling that fails backs off and tries again — nothing is skipped.
 */
import type { DomainHandle } from '../../infra/storage/index.js';
import { createBackoff } from './backoff.js';

export interface CursorLoopOptions<T> {
  store: DomainHandle;
  /** Where the cursor lives in `store`. */
  cursorKey: string;
  /** Items after `cursor` (may wait, e.g. a long poll; aborted on stop). */
  fetch(cursor: number, signal: AbortSignal): Promise<T[]>;
  /** Handles one item; a throw means "not handled": the cursor stays and the item comes again. */
  handle(item: T): Promise<void>;
  /** The cursor just past `item`. */
  after(item: T): number;
  log: (line: string) => void;
  /** What the log calls an item ("update 42"). */
  describe(item: T): string;
}

/** A running loop. */
export interface CursorLoop {
  stop(): Promise<void>;
}

export function startCursorLoop<T>(opts: CursorLoopOptions<T>): CursorLoop {
  let stopped = false;
  const abort = new AbortController();
  const backoff = createBackoff(500, 30_000);
  const run = async (): Promise<void> => {
    let cursor = (await opts.store.getJson<{ next: number }>(opts.cursorKey))?.next ?? 0;
    while (!stopped) {
      let items: T[];
      try {
        items = await opts.fetch(cursor, abort.signal);
        backoff.reset();
      } catch (err) {
        if (stopped) return;
        opts.log(`fetching: ${(err as Error).message}; retrying in ${backoff.next} ms`);
        await backoff.wait();
        continue;
      }
      for (const item of items) {
        if (stopped) return;
        try {
          await opts.handle(item);
        } catch (err) {
          if (stopped) return;
          // Not ingested (Temporal or the database is down): keep the cursor and fetch it again.
          opts.log(`${opts.describe(item)}: ${(err as Error).message}; retrying in ${backoff.next} ms`);
          await backoff.wait();
          break;
        }
        cursor = opts.after(item);
        await opts.store.putJson(opts.cursorKey, { next: cursor });
      }
    }
  };
  const loop = run();
  return {
    async stop() {
      stopped = true;
      abort.abort();
      backoff.wake();
      await loop;
    },
  };
}
