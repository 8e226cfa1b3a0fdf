/**
 * The cancellation scopes a turn runs its steps in: a step races the turn budget and a channel's
 * cancel; an interruptible tool is cancelled by that cancel; a host-bound call waits for its host.
 */
import { ActivityFailure, CancellationScope, condition, setCurrentDetails, sleep, TimeoutFailure } from '@temporalio/workflow';

function notPickedUp(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

/**
 * Runs a host-bound call on its host and only there: while none of the host's workers takes it, the
 * call is scheduled again on the same queue (same activity id, so the same idempotency key) and the
 * UI summary says what the turn waits for. It never falls back to another queue. A turn cancelled
 * meanwhile stops waiting: a call that never started is safe to drop.
 */
export async function onHost<T>(hostQueue: string, tool: string, isCancelled: () => boolean, run: () => Promise<T>): Promise<T> {
  for (let waited = 0; ; waited++) {
    try {
      return await run();
    } catch (err) {
      if (!notPickedUp(err) || isCancelled()) throw err;
      setCurrentDetails(
        `**waiting for host queue ${hostQueue}**: no worker of that host has taken ${tool} (${(waited + 1) * 15} s); it runs there once one polls`,
      );
    }
  }
}

/** Runs `fn` in a scope that is cancelled as soon as `isCancelled()` turns true. */
export async function cancellableBy<T>(isCancelled: () => boolean, fn: () => Promise<T>): Promise<T> {
  const work = new CancellationScope();
  const watcher = new CancellationScope();
  void watcher
    .run(() => condition(isCancelled))
    .then(
      () => work.cancel(),
      () => undefined,
    );
  try {
    return await work.run(fn);
  } finally {
    watcher.cancel();
  }
}

/** How a raced step ended: its value, its error, the turn budget, or a channel's cancel. */
export type Race<T> = { kind: 'done'; value: T } | { kind: 'error'; error: unknown } | { kind: 'timeout' } | { kind: 'cancel' };

/** Runs `fn` in its own cancellable scope, racing the turn budget and a channel cancel. */
export async function raceStep<T>(
  fn: () => Promise<T>,
  remainingMs: number,
  isCancelled: () => boolean,
  cancelWork: boolean,
): Promise<Race<T>> {
  const work = new CancellationScope();
  const watchers = new CancellationScope();
  const outcome = work.run(fn).then(
    (value): Race<T> => ({ kind: 'done', value }),
    (error: unknown): Race<T> => ({ kind: 'error', error }),
  );
  const timer = watchers
    .run(() => sleep(remainingMs))
    .then(
      (): Race<T> => ({ kind: 'timeout' }),
      () => new Promise<Race<T>>(() => undefined),
    );
  const cancel = cancelWork
    ? watchers
        .run(() => condition(isCancelled))
        .then(
          (): Race<T> => ({ kind: 'cancel' }),
          () => new Promise<Race<T>>(() => undefined),
        )
    : new Promise<Race<T>>(() => undefined);
  const winner = await Promise.race([outcome, timer, cancel]);
  watchers.cancel();
  if (winner.kind === 'timeout' || winner.kind === 'cancel') work.cancel();
  return winner;
}
