/**
 * The history a model step sees: the session's summary (if any), then the newest whole turns that
 * fit the token budget. Pure and small on purpose: what the model sees is what the turn's taint
 * may come from (activities/taint-labels.ts historyLabels), so every reader uses this one window.
 */
import type { HistoryEntry } from '../../core/channel.js';
import type { StoredHistory, StoredTurn } from '../ports.js';

/** Tokens the history and the new message may take when the worker's configuration says nothing. */
export const DEFAULT_HISTORY_TOKENS = 8_000;

/** Tokens of one history entry (its text and the per-message framing). */
export type EntryTokens = (entry: HistoryEntry) => number;

/** What the model is shown, and what did not fit. */
export interface HistoryWindow {
  /** The summary's entry (when it fits), then the kept turns' entries, oldest first. */
  entries: HistoryEntry[];
  /** Their tokens: never more than the budget. */
  tokens: number;
  /** The older turns that did not fit, oldest first (what compaction folds into the summary). */
  outside: StoredTurn[];
}

const turnTokens = (t: StoredTurn, count: EntryTokens): number => t.entries.reduce((n, e) => n + count(e), 0);

/**
 * The window of `stored` within `budget` tokens: the summary first, then the newest turns that
 * fit (a turn is kept whole or not at all; the first one that does not fit ends the window).
 */
export function historyWindow(stored: StoredHistory, budget: number, count: EntryTokens): HistoryWindow {
  const summary = stored.summary?.entry;
  const summaryTokens = summary ? count(summary) : 0;
  const head = summary && summaryTokens <= budget ? [summary] : [];
  let tokens = head.length > 0 ? summaryTokens : 0;
  let first = stored.turns.length;
  while (first > 0) {
    const cost = turnTokens(stored.turns[first - 1]!, count);
    if (tokens + cost > budget) break;
    tokens += cost;
    first -= 1;
  }
  const kept = stored.turns.slice(first);
  return { entries: [...head, ...kept.flatMap((t) => t.entries)], tokens, outside: stored.turns.slice(0, first) };
}
