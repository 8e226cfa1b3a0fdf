/**
 * Budgets hold even when the workflow is fooled: an attacker who could complete activities with forged
 * results (usage under-reported, a budget check skipped) still cannot make the worker call the model
 * once the worker's own ledger says the turn or the session's day is spent. Here the workflow's view is
 * bypassed entirely: `llmStep` is run with a ledger already over budget, and the model is never asked.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { wireTurnActivities } from '../../app/wiring.js';
import { spendDay } from '../../core/spend.js';
import { openDatabase, type OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { createSpendLedger } from '../../infra/spend-ledger.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

let database: { url: string; drop(): Promise<void> };
let opened: OpenDatabase;
beforeAll(async () => {
  database = await createTestDatabase('aivyx_spend');
  opened = await openDatabase({ databaseUrl: database.url });
});
afterAll(async () => {
  await opened?.close();
  await database?.drop();
});

describe('a forged under-report of spend', () => {
  it('cannot buy another model call: the worker reads its own ledger before it calls the model', async () => {
    const master = await openKeyring(opened.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
    let calls = 0;
    const llm: LlmProvider = {
      name: 'scripted',
      async step() {
        calls++;
        return { type: 'final', text: 'spent', usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const activities = wireTurnActivities({
      db: opened.db,
      master,
      hub: new StreamHub(),
      llm,
      agent: {
        capabilities: ['llm.call'],
        budgetMs: 60_000,
        confirmFirst: [],
        spendBudgets: { turn: { tokens: 100 }, sessionDay: { tokens: 500 } },
      },
    });
    const ledger = createSpendLedger(opened.db);
    const input = (turnId: string, step: number, sessionKey: string) => ({
      turnId,
      step,
      sessionKey,
      message: { id: 'm', sessionId: 's', content: [{ type: 'text' as const, text: 'hi' }], receivedAt: Date.now() },
      transcript: [],
      tools: [],
    });
    const env = new MockActivityEnvironment();
    // Under budget: the step runs and is recorded by the worker.
    await env.run(activities.llmStep, input('turn/ok', 0, 'session/a'));
    expect(calls).toBe(1);
    // The turn's step 0 ran in two runs (a reset at the frontend makes a new run of the same turn), 75
    // tokens each: both count, so 150 tokens are spent whatever the workflow was told — no step 1.
    // What the worker recorded of a step 0 (today, the scripted model).
    const spent = (turnId: string, runId: string, sessionKey: string, inputTokens: number, outputTokens: number) =>
      ledger.record({
        turnId,
        runId,
        attempt: 1,
        step: 0,
        sessionKey,
        day: spendDay(Date.now()),
        model: 'scripted',
        usage: { inputTokens, outputTokens },
      });
    for (const runId of ['run-1', 'run-2']) await spent('turn/t', runId, 'session/b', 50, 25);
    await expect(env.run(activities.llmStep, input('turn/t', 1, 'session/b'))).rejects.toThrow(
      /the model is not called: this turn has used 150 tokens of a 100-token budget/,
    );
    // The session's day is spent across other turns: a new turn's first step is refused too.
    for (let i = 0; i < 6; i++) await spent(`turn/d${i}`, 'r', 'session/c', 60, 40);
    await expect(env.run(activities.llmStep, input('turn/new', 0, 'session/c'))).rejects.toThrow(
      /this session's day has used 600 tokens of a 500-token budget/,
    );
    expect(calls).toBe(1);
  });
});
