/**
 * The session history on sealed storage: turns in order, and a compaction summary that stands for
 * the turns up to its `through` key, so neither `load` nor `loadTurns` returns those turns again;
 * and the spend ledger's record of what the prompt cache served and of quarantined reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenDatabase } from '../../infra/db/index.js';
import { createSessionHistory, summaryKey } from '../../infra/session-history.js';
import { createSpendLedger } from '../../infra/spend-ledger.js';
import { SealedStorage, StorageKeyring } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

describe.each(openStorageBackends())('session history on $name', (backend) => {
  let s: OpenDatabase;
  let storage: SealedStorage;
  beforeAll(async () => {
    s = await backend.open();
    storage = SealedStorage.open(s.db, new StorageKeyring(new Uint8Array(32).fill(7)));
  });
  afterAll(async () => {
    await s.close();
  });

  it('loads the summary first and only the turns after it', async () => {
    const history = createSessionHistory(storage.domain('sessions'));
    const session = `s-${backend.name}-${Date.now()}`;
    for (const i of [1, 2, 3])
      await history.record(session, {
        turnId: `t${i}`,
        receivedAt: i * 1000,
        entries: [
          { role: 'user', text: `q${i}`, ...(i === 1 ? { untrusted: 'a page from x.example' } : {}) },
          { role: 'assistant', text: `a${i}` },
        ],
      });
    const before = await history.loadTurns!(session);
    expect(before.summary).toBeUndefined();
    expect(before.turns.map((t) => t.entries[0]?.text)).toEqual(['q1', 'q2', 'q3']);
    const summary = {
      through: before.turns[1]!.key,
      entry: { role: 'user' as const, text: 'Summary: q1 and q2', untrusted: 'a page from x.example' },
    };
    await history.saveSummary!(session, summary);
    const after = await history.loadTurns!(session);
    expect(after.summary).toEqual(summary);
    expect(after.turns.map((t) => t.entries[0]?.text)).toEqual(['q3']);
    expect(await history.load(session, 40)).toEqual([summary.entry, { role: 'user', text: 'q3' }, { role: 'assistant', text: 'a3' }]);
    expect(await history.load(session, 2)).toEqual([
      { role: 'user', text: 'q3' },
      { role: 'assistant', text: 'a3' },
    ]);
    expect(summaryKey(session).startsWith(`history/${session}/`)).toBe(false);
  });
});

describe.each(openStorageBackends())('the spend ledger on $name', (backend) => {
  let s: OpenDatabase;
  beforeAll(async () => {
    s = await backend.open();
  });
  afterAll(async () => {
    await s.close();
  });

  it('records cached and written input tokens apart from the total', async () => {
    const turnId = `t-cache-${backend.name}-${Date.now()}`;
    const usage = { inputTokens: 2_000, outputTokens: 50, cachedInputTokens: 1_800, cacheWriteTokens: 150 };
    await createSpendLedger(s.db).record({
      turnId,
      runId: 'r',
      attempt: 1,
      step: 0,
      sessionKey: 's',
      day: '2026-12-05',
      model: 'anthropic:x',
      usage,
    });
    await createSpendLedger(s.db).record({
      turnId,
      runId: 'r',
      attempt: 1,
      step: 1,
      sessionKey: 's',
      day: '2026-12-05',
      model: 'anthropic:x',
      usage: { inputTokens: 10, outputTokens: 1 },
    });
    const rows = await s.db
      .selectFrom('llm_spend')
      .select(['step', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens'])
      .where('turn_id', '=', turnId)
      .orderBy('step')
      .execute();
    expect(rows).toEqual([
      { step: 0, input_tokens: 2_000, cached_input_tokens: 1_800, cache_write_tokens: 150 },
      { step: 1, input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0 },
    ]);
  });

  it("keeps a step's quarantined reads apart from it: each read once per attempt, in the turn's and the call's totals", async () => {
    const ledger = createSpendLedger(s.db);
    const turnId = `t-reads-${backend.name}-${Date.now()}`;
    const row = { turnId, runId: 'r', attempt: 1, sessionKey: 's', day: '2026-12-05', model: 'scripted', costUsd: 0.5 };
    await ledger.record({ ...row, step: 0, usage: { inputTokens: 20, outputTokens: 10 } });
    const read = { ...row, step: 0, kind: 'quarantined-read' as const, usage: { inputTokens: 30, outputTokens: 10 } };
    // The same attempt recording twice (its activity retried after the write) is one row; a second call is another.
    for (const callId of ['s0c0', 's0c0', 's0c1']) await ledger.record({ ...read, callId });
    await ledger.record({ ...read, callId: 's0c1', attempt: 2 });
    const kinds = await s.db.selectFrom('llm_spend').select(['kind', 'call_id']).where('turn_id', '=', turnId).orderBy('call_id').execute();
    expect(kinds).toEqual([
      { kind: 'step', call_id: '' },
      { kind: 'quarantined-read', call_id: 's0c0' },
      { kind: 'quarantined-read', call_id: 's0c1' },
      { kind: 'quarantined-read', call_id: 's0c1' },
    ]);
    expect(await ledger.turnTotal(turnId, 1)).toEqual({ inputTokens: 110, outputTokens: 40, costUsd: 2 });
    expect(await ledger.turnTotal(turnId, 0)).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(await ledger.callTotal({ turnId, runId: 'r', step: 0, callId: 's0c1' })).toEqual({
      inputTokens: 60,
      outputTokens: 20,
      costUsd: 1,
    });
  });
});
