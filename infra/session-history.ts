/** Session history in the sealed `sessions` domain: one record per turn, keyed so a scan returns them in order. */
import type { HistorySummary, SessionHistoryPort, StoredHistory, StoredTurn } from '../activities/ports.js';
import type { HistoryEntry } from '../core/channel.js';
import type { DomainHandle } from './storage/index.js';

// Zero-padded epoch ms sorts bytewise in time order; the turn id breaks ties and makes a re-record overwrite.
function turnKey(sessionKey: string, receivedAt: number, turnId: string): string {
  return `history/${sessionKey}/${String(Math.max(0, Math.floor(receivedAt))).padStart(15, '0')}/${turnId}`;
}

/** Where a session's compaction summary is kept (outside the turns' prefix; clearing a session removes it too). */
export function summaryKey(sessionKey: string): string {
  return `history-summary/${sessionKey}`;
}

/** Forgets what a session's model is shown (`/clear`): its context starts empty, and with it the taint it carried. */
export interface SessionClearPort {
  /** Deletes every exchange the session has recorded (and its compaction summary); returns how many turns' exchanges were removed. */
  clear(sessionKey: string): Promise<number>;
}

/**
 * A `SessionHistoryPort` over the sealed `sessions` domain. `load` is the window whose labels taint
 * the next turn (open-turn): the summary and the newest `limit` entries, a superset of what llm-step
 * shows the model within its token budget, so an exchange the model still sees always taints.
 */
export function createSessionHistory(sessions: DomainHandle): SessionHistoryPort & SessionClearPort {
  /** The summary and every turn after the one it stands for, oldest first. */
  async function loadTurns(sessionKey: string): Promise<StoredHistory> {
    const summary = await sessions.getJson<HistorySummary>(summaryKey(sessionKey));
    const turns: StoredTurn[] = [];
    for await (const { key, value } of sessions.scan(`history/${sessionKey}/`)) {
      if (summary && key <= summary.through) continue;
      turns.push({ key, entries: JSON.parse(new TextDecoder().decode(value)) as HistoryEntry[] });
    }
    return { ...(summary ? { summary } : {}), turns };
  }

  return {
    async load(sessionKey, limit) {
      const { summary, turns } = await loadTurns(sessionKey);
      return [...(summary ? [summary.entry] : []), ...turns.flatMap((t) => t.entries)].slice(-limit);
    },
    async record(sessionKey, turn) {
      await sessions.putJson(turnKey(sessionKey, turn.receivedAt, turn.turnId), turn.entries);
    },
    loadTurns,
    async saveSummary(sessionKey, summary) {
      await sessions.putJson(summaryKey(sessionKey), summary);
    },
    async clear(sessionKey) {
      // Keys first, then deletes: a scan is not kept open across its own deletions.
      const keys: string[] = [];
      for await (const { key } of sessions.scan(`history/${sessionKey}/`)) keys.push(key);
      let removed = 0;
      for (const key of keys) if (await sessions.delete(key)) removed++;
      await sessions.delete(summaryKey(sessionKey));
      return removed;
    },
  };
}
