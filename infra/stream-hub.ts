/**
 * In-process fan-out of best-effort stream events (seed `stream_event`) from activities to the
 * channel adapters running in the same process. Losing an event loses only a progress line:
 * the turn's outcome always arrives through the workflow result and finalize.
 */
import type { ChannelEvent } from '../core/channel.js';

export type { ChannelEvent };

/** A listener for one turn's events. */
export type ChannelEventListener = (event: ChannelEvent) => void;

/** Publish/subscribe by turn id. */
export class StreamHub {
  private readonly listeners = new Map<string, Set<ChannelEventListener>>();

  /** Delivers an event to everyone listening to this turn; a throwing listener never breaks the activity. */
  publish(turnId: string, event: ChannelEvent): void {
    for (const listener of this.listeners.get(turnId) ?? []) {
      try {
        listener(event);
      } catch {
        // best effort by contract
      }
    }
  }

  /** In-process delivery is synchronous: nothing is ever still on its way. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  /** Whether anyone here listens to `turnId` (the cross-process bus opens only those events). */
  has(turnId: string): boolean {
    return this.listeners.has(turnId);
  }

  /** Listens to one turn; returns the function that stops listening. */
  subscribe(turnId: string, listener: ChannelEventListener): () => void {
    let set = this.listeners.get(turnId);
    if (!set) this.listeners.set(turnId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(turnId);
    };
  }
}
