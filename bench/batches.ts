/** Starting many workflows the way the mission benchmarks do, shared by the real missions and their bare shape. */
import { setTimeout as delay } from 'node:timers/promises';

/** Concurrent starts within a batch. */
export const START_CONCURRENCY = 32;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** How `startInBatches` starts and counts. */
export interface BatchRun<T> {
  items: readonly T[];
  batch: number;
  start(item: T): Promise<void>;
  /** How many of the started items have reached the point being measured (polled every 500 ms). */
  reached(): Promise<number>;
  /** Epoch ms after which the run fails. */
  deadline: number;
}

/**
 * Starts `items` in batches ({@link START_CONCURRENCY} at a time) and resolves with the seconds until every
 * one has reached the measured point. The next batch starts once at most half a batch is still on its way:
 * a flood of 1,000 first workflow tasks at once only measures the server's backlog.
 */
export async function startInBatches<T>(run: BatchRun<T>): Promise<number> {
  const count = run.items.length;
  const t0 = performance.now();
  for (let from = 0; from < count; from += run.batch) {
    await pool(run.items.slice(from, from + run.batch), START_CONCURRENCY, run.start);
    // Keep at most 1.5 batches in flight; after the last one, wait for every item.
    const want = from + run.batch >= count ? count : from + run.batch - Math.floor(run.batch / 2);
    let reached: number;
    while ((reached = await run.reached()) < want) {
      if (Date.now() > run.deadline) throw new Error(`only ${reached} of ${count} reached the measured point in time`);
      await delay(500);
    }
  }
  return (performance.now() - t0) / 1000;
}
