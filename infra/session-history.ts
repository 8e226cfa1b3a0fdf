/** Session history in the sealed `sessions` domain: one record per turn, keyed so a scan returns them in order. */
import type { SessionHistoryPort } from '../activities/ports.js';
import type { HistoryEntry } from '../core/channel.js';
import type { DomainHandle } from './storage/index.js';

// Zero-padded epoch ms sorts bytewise in time order; the turn id breaks ties and makes a re-record overwrite.
function turnKey(sessionKey: string, receivedAt: number, turnId: string): string {
  return `history/${sessionKey}/${String(Math.max(0, Math.floor(receivedAt))).padStart(15, '0')}/${turnId}`;
}

/** A `SessionHistoryPort` over the sealed `sessions` domain. */
export function createSessionHistory(sessions: DomainHandle): SessionHistoryPort {
  return {
    async load(sessionKey, limit) {
      const turns: HistoryEntry[][] = [];
      for await (const { value } of sessions.scan(`history/${sessionKey}/`)) {
        turns.push(JSON.parse(new TextDecoder().decode(value)) as HistoryEntry[]);
        if (turns.length > limit) turns.shift();
      }
      return turns.flat().slice(-limit);
    },
    async record(sessionKey, turn) {
      await sessions.putJson(turnKey(sessionKey, turn.receivedAt, turn.turnId), turn.entries);
    },
  };
}
