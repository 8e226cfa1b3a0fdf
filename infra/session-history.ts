/** Session history in the sealed `sessions` domain: one record per turn, keyed so a scan returns them in order. */
import type { SessionHistoryPort } from '../activities/ports.js';
import type { HistoryEntry } from '../core/channel.js';
import type { DomainHandle } from './storage/index.js';

// Zero-padded epoch ms sorts bytewise in time order; the turn id breaks ties and makes a re-record overwrite.
function turnKey(sessionKey: string, receivedAt: number, turnId: string): string {
  return `${prefixOf(sessionKey)}${String(Math.max(0, Math.floor(receivedAt))).padStart(15, '0')}/${turnId}`;
}

function prefixOf(sessionKey: string): string {
  return `history/${sessionKey}/`;
}

/** Forgets what a session's model is shown (`/clear`): its context starts empty, and with it the taint it carried. */
export interface SessionClearPort {
  /** Deletes every exchange the session has recorded; returns how many turns' exchanges were removed. */
  clear(sessionKey: string): Promise<number>;
}

/**
 * A `SessionHistoryPort` over the sealed `sessions` domain. `load` is the window the model is shown
 * (llm-step) and the one whose labels taint the next turn (open-turn): the same newest `limit` entries,
 * so an exchange that has scrolled out neither reaches the model nor taints.
 */
export function createSessionHistory(sessions: DomainHandle): SessionHistoryPort & SessionClearPort {
  return {
    async load(sessionKey, limit) {
      const turns: HistoryEntry[][] = [];
      for await (const { value } of sessions.scan(prefixOf(sessionKey))) {
        turns.push(JSON.parse(new TextDecoder().decode(value)) as HistoryEntry[]);
        if (turns.length > limit) turns.shift();
      }
      return turns.flat().slice(-limit);
    },
    async record(sessionKey, turn) {
      await sessions.putJson(turnKey(sessionKey, turn.receivedAt, turn.turnId), turn.entries);
    },
    async clear(sessionKey) {
      // Keys first, then deletes: a scan is not kept open across its own deletions.
      const keys: string[] = [];
      for await (const { key } of sessions.scan(prefixOf(sessionKey))) keys.push(key);
      let removed = 0;
      for (const key of keys) if (await sessions.delete(key)) removed++;
      return removed;
    },
  };
}
