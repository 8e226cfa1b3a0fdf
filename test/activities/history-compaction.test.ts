/**
 * The history a step sends: within its token budget, older turns folded into a summary by a
 * tool-less model call that keeps their taint labels, a message the budget cannot hold refused
 * for good, and a SemiTrusted turn offered only the tools its capabilities could grant.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { toApplicationFailure } from '../../activities/failure.js';
import { compactedHistory, SUMMARY_PREFIX, SUMMARY_PROMPT, type CompactionInput } from '../../activities/llm/compaction.js';
import { historyWindow } from '../../activities/llm/history-window.js';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { entryCounter, offeredToolIds } from '../../activities/llm/step-prompt.js';
import { loadTokenizer } from '../../activities/llm/token-count.js';
import type { HistorySummary, StoredTurn } from '../../activities/ports.js';
import { historyLabels } from '../../activities/taint-labels.js';
import { AivyxError } from '../../core/errors.js';
import { CapabilitySet, tierCeiling } from '../../core/capability/index.js';
import type { LlmStepRequest } from '../../core/llm.js';
import { findTool, TOOL_CATALOG } from '../../core/tool-catalog.js';
import { DEFAULT_AGENT_CAPABILITIES } from '../../infra/config/env-table.js';
import { sink } from '../support/llm-replay.js';

const count = entryCounter('openai');
beforeAll(loadTokenizer);
const PAGE = 'a page from evil.example';
const STRANGER = 'a message from bob on telegram (SemiTrusted)';

/** A session's stored turns in memory: `turns[i]` asked and answered with `words` words each. */
function store(labels: Array<string | undefined>, words = 60) {
  const text = (i: number) => `turn ${i} ${'word '.repeat(words)}`;
  const turns: StoredTurn[] = labels.map((untrusted, i) => ({
    key: `k${String(i).padStart(3, '0')}`,
    entries: [
      { role: 'user', text: text(i), ...(untrusted ? { untrusted } : {}) },
      { role: 'assistant', text: text(i), ...(untrusted ? { untrusted } : {}) },
    ],
  }));
  let summary: HistorySummary | undefined;
  return {
    saved: () => summary,
    loadTurns: async () => ({ ...(summary ? { summary } : {}), turns: turns.filter((t) => !summary || t.key > summary.through) }),
    saveSummary: async (_: string, s: HistorySummary) => void (summary = s),
  };
}

/** A model that summarises in a fixed sentence, recording what it was asked. */
function summariser(): LlmProvider & { asked: LlmStepRequest[] } {
  const asked: LlmStepRequest[] = [];
  return {
    name: 'openai',
    asked,
    step: async (req) => {
      asked.push(req);
      return { type: 'final', text: 'They talked about many words.', usage: { inputTokens: 100, outputTokens: 8 } };
    },
  };
}

const input = (budget: number, messageTokens = 20): CompactionInput => ({
  sessionKey: 's',
  budget,
  messageTokens,
  count,
  turnId: 't',
  step: 0,
});

describe('history compaction', () => {
  it('fits as stored: no model call, every turn kept', async () => {
    const history = store([undefined, PAGE]);
    const llm = summariser();
    const { window, usage } = await compactedHistory(history, llm, sink(), input(2_000));
    expect(llm.asked).toHaveLength(0);
    expect(usage).toBeUndefined();
    expect(window.entries).toHaveLength(4);
  });

  it('over budget: the older turns become one summary, from a tool-less call, labelled with their untrusted sources', async () => {
    const history = store([undefined, PAGE, STRANGER, undefined, undefined, undefined]);
    const llm = summariser();
    const budget = 500;
    const { window, usage } = await compactedHistory(history, llm, sink(), input(budget));
    expect(llm.asked).toHaveLength(1);
    expect(llm.asked[0]).toMatchObject({ tools: [], history: [], transcript: [], system: SUMMARY_PROMPT });
    const summary = history.saved()!;
    expect(summary.entry.text.startsWith(SUMMARY_PREFIX)).toBe(true);
    // A summary of untrusted content is untrusted: both sources survive, flat.
    expect(summary.entry.untrusted).toBe(`${PAGE}; ${STRANGER}`);
    expect(window.entries[0]).toEqual(summary.entry);
    expect(historyLabels(window.entries)).toEqual([PAGE, STRANGER]);
    expect(window.tokens + 20).toBeLessThanOrEqual(budget);
    expect(usage).toEqual({ inputTokens: 100, outputTokens: 8 });
    // The next turn reads the same summary and the same kept turns: nothing is compacted again.
    const again = await compactedHistory(history, llm, sink(), input(budget));
    expect(llm.asked).toHaveLength(1);
    expect(again.window.entries).toEqual(window.entries);
  });

  it('a summary of trusted turns only is trusted, and a later compaction keeps the earlier summary label', async () => {
    const history = store([undefined, undefined, undefined, undefined, undefined, undefined]);
    const llm = summariser();
    await compactedHistory(history, llm, sink(), input(500));
    expect(history.saved()?.entry.untrusted).toBeUndefined();
    const tainted = store([PAGE, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
    await compactedHistory(tainted, llm, sink(), input(500));
    const first = tainted.saved()!;
    expect(first.entry.untrusted).toBe(PAGE);
    await compactedHistory(tainted, llm, sink(), input(150));
    expect(tainted.saved()!.through > first.through).toBe(true);
    expect(tainted.saved()?.entry.untrusted).toBe(PAGE);
  });

  it('a message the budget cannot hold fails with a clear, non-retryable Llm error before any model call', async () => {
    const llm = summariser();
    const err = await compactedHistory(store([undefined]), llm, sink(), input(1_000, 1_200)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AivyxError);
    expect(err).toMatchObject({ kind: 'Llm', detail: { retryable: false, messageTokens: 1_200, budget: 1_000 } });
    expect((err as Error).message).toContain('too long');
    expect(toApplicationFailure(err).nonRetryable).toBe(true);
    expect(llm.asked).toHaveLength(0);
  });

  it('the window never exceeds its budget and keeps the newest whole turns', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 80 }), { maxLength: 30 }), fc.integer({ min: 0, max: 2_000 }), (sizes, budget) => {
        const turns: StoredTurn[] = sizes.map((n, i) => ({ key: `k${i}`, entries: [{ role: 'user', text: 'x '.repeat(n) }] }));
        const w = historyWindow({ turns }, budget, count);
        expect(w.tokens).toBeLessThanOrEqual(budget);
        expect([...w.outside, ...turns.slice(w.outside.length)]).toEqual(turns);
        expect(w.entries).toEqual(turns.slice(w.outside.length).flatMap((t) => t.entries));
      }),
    );
  });
});

describe('the tools a turn is offered', () => {
  const ids = TOOL_CATALOG.map((t) => t.id);
  const effective = (tier: 'Trusted' | 'SemiTrusted') =>
    CapabilitySet.from(DEFAULT_AGENT_CAPABILITIES).intersect(tierCeiling(tier)).toJSON();

  it('a SemiTrusted turn is offered only tools its effective capabilities could grant', () => {
    const held = effective('SemiTrusted');
    const offered = offeredToolIds(ids, held);
    expect(offered.length).toBeGreaterThan(0);
    for (const id of offered) expect(held.some((s) => s.split(':')[0] === findTool(id)?.scopeBase)).toBe(true);
    for (const id of ['shell.exec', 'fs.write', 'fs.read', 'memory.forget', 'mission.create', 'net.post', 'mcp.call'])
      expect(offered).not.toContain(id);
    expect(offered).toContain('memory.recall');
    expect(offered.length).toBeLessThan(offeredToolIds(ids, effective('Trusted')).length);
  });

  it('keeps catalog order and offers a tool held only in a qualified form', () => {
    expect(offeredToolIds(['memory.recall', 'fs.read', 'shell.exec'], ['fs.read:/home/me/**', 'memory.read:topic:x'])).toEqual([
      'memory.recall',
      'fs.read',
    ]);
  });
});
