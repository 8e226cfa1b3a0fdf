/**
 * An outbox in the sealed `channel_state` domain: makes a channel's send happen at most once per
 * key (a delivery activity's `idemKey`), however often the activity is retried or the process
 * restarts. A send is recorded `sending` before and `sent` after; a send that throws is taken as
 * not delivered and its mark removed, so the retry sends. A mark found `sending` means a crash
 * between the two writes: the send may have happened, and is not repeated.
 */
import type { DomainHandle } from './storage/index.js';

/** What `Outbox.once` did. */
export type OutboxResult<T> =
  | { status: 'sent'; value: T }
  | { status: 'already-sent'; value: T }
  /** A previous attempt crashed between sending and recording it: not sent again. */
  | { status: 'uncertain' };

interface Mark<T> {
  state: 'sending' | 'sent';
  value?: T;
  at: number;
}

/** At-most-once sends by key. */
export interface Outbox {
  /** Runs `send` unless `key` was sent (or may have been); `value` is what the first send returned. */
  once<T>(key: string, send: () => Promise<T>): Promise<OutboxResult<T>>;
  /** The recorded value of a finished send, if any. */
  sent<T>(key: string): Promise<T | undefined>;
}

/** An outbox under `<prefix>/<key>` of a `channel_state` handle. */
export function createOutbox(store: DomainHandle, prefix = 'outbox'): Outbox {
  const at = (key: string) => `${prefix}/${key}`;
  return {
    async once<T>(key: string, send: () => Promise<T>): Promise<OutboxResult<T>> {
      const mark = await store.getJson<Mark<T>>(at(key));
      if (mark?.state === 'sent') return { status: 'already-sent', value: mark.value as T };
      if (mark?.state === 'sending') return { status: 'uncertain' };
      await store.putJson(at(key), { state: 'sending', at: Date.now() } satisfies Mark<T>);
      let value: T;
      try {
        value = await send();
      } catch (err) {
        await store.delete(at(key));
        throw err;
      }
      await store.putJson(at(key), { state: 'sent', value, at: Date.now() } satisfies Mark<T>);
      return { status: 'sent', value };
    },
    async sent<T>(key: string): Promise<T | undefined> {
      const mark = await store.getJson<Mark<T>>(at(key));
      return mark?.state === 'sent' ? mark.value : undefined;
    },
  };
}
