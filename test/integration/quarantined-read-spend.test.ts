/**
 * A quarantined read (`value.read`) is a model call its turn pays for (docs/BUDGETS.md): its tokens
 * are in the spend ledger as a row of their own, in the turn's totals and against its budget, and a
 * retried read is paid for once. On the shared dev server with real PostgreSQL; the scripted model
 * declares each call's tokens, and answers as the quarantined reader when its prompt says so.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quarantinedReader } from '../../activities/llm/quarantined-reader.js';
import { modelSpend } from '../../activities/turn/model-spend.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import type { ChannelFacts } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { spendDay } from '../../core/spend.js';
import { createSpendLedger } from '../../infra/spend-ledger.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

/** A read of the invoice total, asking `question`. */
const read = (question: string) => ({
  tool: 'value.read',
  input: { from: 'Invoice 7: the total is 42 euros.', as: 'number', question, min: 0, max: 1000 },
});
// Each model step 30 tokens (20 in, 10 out), each quarantined read 40 (30 in, 10 out); $1 and $2 per million in and out.
const step = { inputTokens: 20, outputTokens: 10 };
const script = {
  rules: [
    { match: 'You are a quarantined reader', steps: [{ say: '{"answer": 42}', usage: { inputTokens: 30, outputTokens: 10 } }] },
    {
      match: 'read once',
      steps: [
        { call: [read('the total')], usage: step },
        { say: 'it is {{result.0.output.answer}}', usage: step },
      ],
    },
    {
      match: 'read thrice',
      steps: [{ call: [read('the total'), read('the total in euros'), read('the amount due')], usage: step }, { say: 'never' }],
    },
    {
      match: 'read while dying',
      steps: [
        { call: [read('asked of a dying worker')], usage: step },
        { say: 'read', usage: step },
      ],
    },
  ],
};

let dyingRuns = 0;
let tc: TestConnection;
let h: MissionHarness;
let turns: TurnGateway;
beforeAll(async () => {
  tc = await testConnection();
  h = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    {
      script,
      agent: { prices: { scripted: { inputPerMTok: 1, outputPerMTok: 2 } }, spendBudgets: { turn: { tokens: 150 } } },
      // The read of a dying worker: runTool reads (and records), then dies before it reports, once; Temporal retries it.
      interpose: {
        runTool:
          (real) =>
          async (...args) => {
            const out = await real(...args);
            if (JSON.stringify(args[0]).includes('asked of a dying worker') && dyingRuns++ === 0)
              throw new Error('the worker died before it reported');
            return out;
          },
      },
    },
  );
  turns = new TurnGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, hub: h.hub });
}, 120_000);
afterAll(async () => h?.stop());

/** Runs `text` as a turn of a new conversation of the owner's. */
async function turn(text: string): Promise<{ turnId: string; outcome: TurnOutcome }> {
  const facts: ChannelFacts = { name: 'rest', platform: 'Rest', trustTier: 'Trusted', sessionId: `rest-${randomUUID()}`, sender: 'owner' };
  const message = { id: randomUUID(), sessionId: facts.sessionId, content: textContent(text), receivedAt: Date.now() };
  const t = await turns.start(facts, message, () => undefined);
  return { turnId: t.turnWorkflowId, outcome: await t.outcome };
}

/** The turn's rows in the spend ledger, in order. */
const ledger = (turnId: string) =>
  h.db
    .selectFrom('llm_spend')
    .select(['step', 'kind', 'call_id', 'attempt', 'model', 'input_tokens', 'output_tokens', 'cost_usd'])
    .where('turn_id', '=', turnId)
    .orderBy('step')
    .orderBy('call_id')
    .execute();
const stepRow = (n: number) => ({ step: n, kind: 'step', call_id: '', attempt: 1, input_tokens: 20, output_tokens: 10 });
const readRow = (callId: string) => ({
  step: 0,
  kind: 'quarantined-read',
  call_id: callId,
  attempt: 1,
  model: 'scripted',
  input_tokens: 30,
  output_tokens: 10,
  cost_usd: 0.00005,
});
const ended = (evs: AuditEvent[]) => evs.find((e): e is Extract<AuditEvent, { type: 'TurnEnded' }> => e.type === 'TurnEnded');

describe('quarantined reads are paid for', () => {
  it("a read's tokens are in the ledger, marked as a quarantined read, and in the turn's totals", async () => {
    const { turnId, outcome } = await turn('read once');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'it is 42', spend: { inputTokens: 70, outputTokens: 30 } });
    expect(outcome.status === 'Completed' && outcome.spend?.costUsd).toBeCloseTo(0.00013, 10);
    expect(await ledger(turnId)).toMatchObject([stepRow(0), readRow('s0c0'), stepRow(1)]);
    expect(ended(await h.audit(turnId))).toMatchObject({ outcome: 'Completed', inputTokens: 70, outputTokens: 30, totalTokens: 100 });
  }, 120_000);

  it('reads that use the turn budget up stop the turn as a model step would: TimedOut at the budget, no further step', async () => {
    // The step alone is 30 of 150 tokens; its three reads bring the turn to 150.
    const { turnId, outcome } = await turn('read thrice');
    expect(outcome).toMatchObject({
      status: 'TimedOut',
      toolCallsMade: 3,
      budget: { limit: 'turn', reason: 'this request used 150 tokens of a 150-token budget and was stopped' },
      spend: { inputTokens: 110, outputTokens: 40 },
    });
    expect(await ledger(turnId)).toMatchObject([stepRow(0), readRow('s0c0'), readRow('s0c1'), readRow('s0c2')]);
    expect(ended(await h.audit(turnId))).toMatchObject({ outcome: 'TimedOut(budget:turn)', totalTokens: 150 });
  }, 120_000);

  it('a read whose activity is retried after it ran is paid for once, in the ledger and in the totals', async () => {
    const { turnId, outcome } = await turn('read while dying');
    expect(dyingRuns).toBe(2);
    expect(outcome).toMatchObject({ status: 'Completed', spend: { inputTokens: 70, outputTokens: 30 } });
    expect(await ledger(turnId)).toMatchObject([stepRow(0), readRow('s0c0'), stepRow(1)]);
  }, 120_000);

  it('the worker refuses a read once its own ledger says the turn is spent, whatever the workflow was told', async () => {
    const spend = createSpendLedger(h.db);
    const at = { turnId: `turn/forged-${randomUUID()}`, sessionKey: 'session/rest/forged', step: 1, callId: 's1c0' };
    await spend.record({
      ...at,
      runId: 'r',
      attempt: 1,
      step: 0,
      day: spendDay(Date.now()),
      model: 'scripted',
      usage: { inputTokens: 100, outputTokens: 60 },
    });
    let asked = 0;
    const reader = quarantinedReader({
      name: 'scripted',
      step: async () => {
        asked++;
        return { type: 'final', text: '{"answer": 1}' };
      },
    });
    const agent = { capabilities: [], budgetMs: 60_000, confirmFirst: [], spendBudgets: { turn: { tokens: 150 } } };
    const meter = modelSpend({ agent, spend }).meter(at);
    const q = { data: 'x', as: 'number' as const, question: 'q', min: 0, max: 9 };
    await expect(reader.read(q, { signal: new AbortController().signal, heartbeat: () => undefined, spend: meter })).rejects.toThrow(
      /the model is not called: this turn has used 160 tokens of a 150-token budget/,
    );
    expect(asked).toBe(0);
  });
});
