/**
 * A mission's spend budget on the time-skipping server (docs/BUDGETS.md): each step turn uses 50
 * tokens (the script declares it); a mission with a 60-token budget runs two steps, then waits at a
 * `mission.budget` gate before the third. Forged raises — a decision with another key's proof, one
 * from someone not asked, a definition whose budget was edited after signing — change nothing; an
 * approver's approval raises the budget and the mission completes; a denial ends it, the step unrun.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { createAttestor } from '../../infra/attestation.js';
import type { GateApprover } from '../../machines/index.js';
import {
  approveGateUpdate,
  BUDGET_TOOL_ID,
  denyGateUpdate,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { timeSkippingEnv, updateRefusal } from '../support/temporal.js';

const script = { rules: [{ steps: [{ say: 'step done', usage: { inputTokens: 40, outputTokens: 10 } }] }] };
const alice: GateApprover = { identity: 'alice', channel: 'telegram', trustTier: 'Trusted' };

let env: TestWorkflowEnvironment;
let h: MissionHarness;

beforeAll(async () => {
  env = await timeSkippingEnv();
  h = await startMissionHarness(env, { script });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await env?.teardown();
});

function definition(steps: string[], over: Partial<MissionDefinition> = {}): MissionDefinition {
  const missionId = `mission-${randomUUID()}`;
  return {
    missionId,
    goal: 'write three reports',
    steps: steps.map((text) => ({ text })),
    approvers: [{ identity: 'alice', channel: 'telegram' }],
    onExpire: 'fail',
    capabilities: [],
    channel: { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: `m-${missionId}`, sender: 'owner' },
    budget: { tokens: 60 },
    ...over,
  };
}

async function start(def: MissionDefinition, args = signedMissionArgs(h.attestor, def)): Promise<WorkflowHandle<typeof missionWorkflow>> {
  return env.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: h.taskQueue,
    args: [args],
  });
}

/** Polls until the budget gate is open (in real time: the clock does not skip while nothing awaits a result). */
async function budgetGate(handle: WorkflowHandle<typeof missionWorkflow>): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const s = await handle.query(missionStatusQuery);
    if (s.gate?.tool === BUDGET_TOOL_ID && s.gate.state === 'open') return s.gate.gateId;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${handle.workflowId} never stopped at a budget gate`);
}

const of = <T extends AuditEvent['type']>(evs: AuditEvent[], type: T) =>
  evs.filter((e): e is Extract<AuditEvent, { type: T }> => e.type === type);

describe('a mission over its token budget', () => {
  it('stops at a gate; forged raises change nothing; an approver raising it lets the mission complete', async () => {
    // A definition whose budget was raised after it was signed is refused before anything runs
    // (first: awaiting its end lets the server skip time, which would fire the real gate's reminder).
    const other = definition(['report one']);
    const signed = signedMissionArgs(h.attestor, other);
    const forged = await start(other, { ...signed, definition: { ...signed.definition, budget: { tokens: 1_000_000 } } });
    await expect(forged.result()).rejects.toThrow();
    expect(of(await h.audit(other.missionId), 'MissionRejected')).toHaveLength(1);

    const def = definition(['report one', 'report two', 'report three']);
    const handle = await start(def);
    const gateId = await budgetGate(handle);

    // Two steps ran (100 tokens of 60): the third waits, and the gate says what it asks.
    const at = await handle.query(missionStatusQuery);
    expect(at).toMatchObject({
      state: 'waiting',
      step: 2,
      stepsRun: 2,
      spent: { inputTokens: 80, outputTokens: 20 },
      budget: { tokens: 60 },
    });
    expect(at.gate?.call).toEqual([
      'spent: 100 tokens (80 in, 20 out) (2 step(s) of an unpriced model: tokens only)',
      'budget: 60 tokens',
      'raise to: 160 tokens',
    ]);
    const opened = h.notices.find((n) => n.gateId === gateId && n.kind === 'opened');
    expect(opened?.text).toBe(
      'mission.budget needs approval: this mission has used 100 tokens of a 60-token budget; raise it to 160 tokens?',
    );

    // The attacker at the frontend: a decision under another install's key, one signed for someone not asked.
    const mallory = createAttestor(new Uint8Array(32).fill(7));
    expect(
      await updateRefusal(handle.executeUpdate(approveGateUpdate, { args: [signedDecision(mallory, 'approve', gateId, alice)] })),
    ).toContain('approval refused');
    expect(
      await updateRefusal(
        handle.executeUpdate(approveGateUpdate, {
          args: [signedDecision(h.attestor, 'approve', gateId, { identity: 'mallory', channel: 'telegram', trustTier: 'Trusted' })],
        }),
      ),
    ).toContain('not an approver');
    // Still at the gate, the third step unrun.
    expect(await handle.query(missionStatusQuery)).toMatchObject({ state: 'waiting', stepsRun: 2, gate: { gateId, state: 'open' } });
    expect(await h.audit(`${def.missionId}/step-2/run-1`)).toEqual([]);

    // The approver raises it: the third step runs and the mission completes.
    await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gateId, alice)] });
    expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 3, spent: { inputTokens: 120, outputTokens: 30 } });

    const audit = await h.audit(def.missionId);
    expect(audit.map((e) => e.type)).toEqual([
      'MissionStarted',
      'MissionStepFinished',
      'MissionStepFinished',
      'GateOpened',
      // The forged proof, checked (and refused) by the worker; the unlisted approver never got past the validator.
      'GateDecisionRejected',
      'GateApproved',
      'MissionBudgetRaised',
      'MissionStepFinished',
      'MissionEnded',
    ]);
    expect(of(audit, 'GateOpened')[0]).toMatchObject({ gateId, tool: BUDGET_TOOL_ID });
    expect(of(audit, 'MissionBudgetRaised')[0]).toMatchObject({ gateId, fromTokens: 60, toTokens: 160 });
    expect(of(audit, 'MissionEnded')[0]).toMatchObject({ state: 'completed', inputTokens: 120, outputTokens: 30, totalTokens: 150 });
    // Each step turn's own totals are in its TurnEnded.
    expect(of(await h.audit(`${def.missionId}/step-2/run-1`), 'TurnEnded')[0]).toMatchObject({ totalTokens: 50 });
    expect((await h.verify()).ok).toBe(true);
  }, 120_000);

  it('denied: the mission ends failed, saying why, and the step waiting for the budget never runs', async () => {
    const def = definition(['report one', 'report two', 'report three']);
    const handle = await start(def);
    const gateId = await budgetGate(handle);
    await handle.executeUpdate(denyGateUpdate, { args: [signedDecision(h.attestor, 'deny', gateId, alice, 'enough')] });
    const result = await handle.result();
    expect(result).toMatchObject({ state: 'failed', stepsRun: 2 });
    expect(result.reason).toContain(
      'the spend budget was used up (100 tokens of a 60-token budget) and not raised: denied by alice on telegram',
    );
    expect(await h.audit(`${def.missionId}/step-2/run-1`)).toEqual([]);
    expect(of(await h.audit(def.missionId), 'MissionBudgetRaised')).toEqual([]);
  }, 120_000);
});
