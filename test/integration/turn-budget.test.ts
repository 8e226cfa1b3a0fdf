/**
 * Spend budgets of turns and of a session's day (docs/BUDGETS.md), on the shared dev server with
 * real PostgreSQL: the scripted model declares each step's tokens, the scripted model is priced,
 * and the worker's configuration holds the budgets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../core/audit-events.js';
import { outcomeReplyText } from '../../channels/outcome-text.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

// 60 tokens a step of 'look', 50 for any other answer; $1 and $2 per million input and output tokens.
const script = {
  rules: [
    {
      match: 'look',
      steps: [
        { call: [{ tool: 'fs.metadata', input: { path: '/tmp' } }], usage: { inputTokens: 40, outputTokens: 20 } },
        { call: [{ tool: 'fs.metadata', input: { path: '/tmp' } }], usage: { inputTokens: 40, outputTokens: 20 } },
        { say: 'looked twice', usage: { inputTokens: 40, outputTokens: 20 } },
      ],
    },
    { steps: [{ say: 'hello', usage: { inputTokens: 30, outputTokens: 20 } }] },
  ],
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    script,
    agent: {
      prices: { scripted: { inputPerMTok: 1, outputPerMTok: 2 } },
      spendBudgets: { turn: { tokens: 100 }, sessionDay: { tokens: 150 } },
    },
  });
}, 120_000);
afterAll(async () => h?.stop());

const ended = (evs: AuditEvent[]) => evs.find((e): e is Extract<AuditEvent, { type: 'TurnEnded' }> => e.type === 'TurnEnded');
const stepsRecorded = async (turnId: string) =>
  (await h.db.selectFrom('llm_spend').select('step').where('turn_id', '=', turnId).execute()).length;

describe('spend budgets', () => {
  it('a turn that uses its budget up stops before running the calls of that step, saying why; its totals are audited and shown', async () => {
    const sessionId = `budget-${Date.now()}`;
    const { turnId, outcome } = await h.turn('look around', { sessionId });
    expect(outcome).toMatchObject({
      status: 'TimedOut',
      toolCallsMade: 1,
      budget: { limit: 'turn', reason: 'this request used 120 tokens of a 100-token budget and was stopped' },
      spend: { inputTokens: 80, outputTokens: 40 },
    });
    expect(outcome.spend?.costUsd).toBeCloseTo(0.00016, 10);
    expect(outcomeReplyText(outcome, turnId)).toContain('Sorry, I stopped: this request used 120 tokens of a 100-token budget');
    const audit = await h.audit(turnId);
    // The second step's call never ran: one ToolCall entry.
    expect(audit.filter((e) => e.type === 'ToolCall')).toHaveLength(1);
    expect(ended(audit)).toMatchObject({ outcome: 'TimedOut(budget:turn)', inputTokens: 80, outputTokens: 40, totalTokens: 120 });
    expect(await stepsRecorded(turnId)).toBe(2);
    const meta = (await h.client.workflow.getHandle(turnId).query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(meta.currentDetails).toContain('120 tokens (80 in, 40 out), $0.0002');

    // The session has 120 of its 150 for today: the next turn runs (and goes over), the one after does not start a step.
    const second = await h.turn('hi', { sessionId });
    expect(second.outcome).toMatchObject({
      status: 'Completed',
      finalMessage: 'hello',
      spend: { inputTokens: 30, outputTokens: 20, costUsd: 0.00007 },
    });
    expect(ended(await h.audit(second.turnId))).toMatchObject({ outcome: 'Completed', totalTokens: 50, costUsd: 0.00007 });
    const third = await h.turn('hi again', { sessionId });
    expect(third.outcome).toMatchObject({
      status: 'TimedOut',
      toolCallsMade: 0,
      budget: { limit: 'session-day', reason: expect.stringMatching(/^this conversation has used 170 tokens of a 150-token budget today/) },
    });
    expect(third.outcome.spend).toBeUndefined();
    expect(await stepsRecorded(third.turnId)).toBe(0);
    expect(ended(await h.audit(third.turnId))).toMatchObject({ outcome: 'TimedOut(budget:session-day)' });

    // Another conversation has its own day.
    expect((await h.turn('hi', { sessionId: `${sessionId}-other` })).outcome).toMatchObject({ status: 'Completed' });
    expect((await h.verify()).ok).toBe(true);
  }, 120_000);
});
