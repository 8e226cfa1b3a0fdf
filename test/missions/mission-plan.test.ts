/**
 * Plan → approve → execute on the time-skipping server (issue 12): a mission from a goal alone asks
 * the model for a plan, and one plan gate shows the whole plan before anything runs. Denied: nothing
 * runs. Approved: the planned mission runs its steps with exactly the plan's capability set — a call
 * the mission as a whole could make, but the plan did not ask for, is denied. The attacker: a plan
 * that asks for more than the mission holds is refused before any gate opens.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissionGateway } from '../../channels/mission-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { plannedMissionId, type MissionResult } from '../../workflows/mission-messages.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { timeSkippingEnv } from '../support/temporal.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-plan-'));
const notes = join(dir, 'notes.txt');
writeFileSync(notes, 'pay the rent');
const outside = join(mkdtempSync(join(tmpdir(), 'aivyx-outside-')), 'secret.txt');
writeFileSync(outside, 'not for this plan');

const PLAN = {
  goal: 'tidy up my notes',
  steps: ['read my notes', 'read the secret file', { notify: 'your notes are tidy' }],
  capabilities: [`fs.read:${dir}/**`],
};

let env: TestWorkflowEnvironment;
let h: MissionHarness;
let gw: MissionGateway;

beforeAll(async () => {
  env = await timeSkippingEnv();
  h = await startMissionHarness(env, {
    script: {
      rules: [
        { match: 'greedy', steps: [{ call: [{ tool: 'mission.plan', input: { ...PLAN, capabilities: ['fs.write:/'] } }] }] },
        { match: 'Plan this mission', steps: [{ call: [{ tool: 'mission.plan', input: PLAN }] }] },
        {
          match: 'read my notes',
          steps: [{ call: [{ tool: 'fs.read', input: { path: notes } }] }, { say: 'notes: {{results}}', sayOnFailure: 'no: {{results}}' }],
        },
        {
          match: 'read the secret',
          steps: [
            { call: [{ tool: 'fs.read', input: { path: outside } }] },
            { say: 'secret: {{results}}', sayOnFailure: 'no: {{results}}' },
          ],
        },
      ],
    },
    // The mission as a whole may read anything; the plan asks for one folder.
    agent: { capabilities: ['fs.read', 'llm.call'], confirmFirst: [] },
  });
  gw = new MissionGateway({ client: env.client, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: ['fs.read', 'llm.call'] });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await env?.teardown();
});

async function planGate(missionId: string) {
  for (let i = 0; i < 400; i++) {
    const s = await gw.show(missionId);
    if (s.gate?.state === 'open') return s.gate;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${missionId} never opened its plan gate`);
}
const of = <T extends AuditEvent['type']>(evs: AuditEvent[], type: T) =>
  evs.filter((e): e is Extract<AuditEvent, { type: T }> => e.type === type);
const result = (missionId: string) => env.client.workflow.getHandle(missionId).result() as Promise<MissionResult>;

describe('plan → approve → execute', () => {
  it('the plan gate shows the whole plan; denied, nothing of it runs', async () => {
    const { missionId } = await gw.create({ goal: 'tidy up my notes', plan: true });
    const gate = await planGate(missionId);
    expect(gate.tool).toBe('mission.plan');
    expect(gate.call).toEqual([
      'goal: "tidy up my notes"',
      'step 1: task "read my notes"',
      'step 2: task "read the secret file"',
      'step 3: notify the owner "your notes are tidy"',
      `capabilities: "fs.read:${dir}/**"`,
    ]);
    await gw.deny(gate.gateId, 'not now');
    expect(await result(missionId)).toMatchObject({ state: 'failed', stepsRun: 1 });
    // No planned mission, no step turn.
    expect(await h.audit(plannedMissionId(missionId))).toEqual([]);
    const audit = await h.audit(missionId);
    expect(of(audit, 'GateOpened')).toEqual([expect.objectContaining({ tool: 'mission.plan' })]);
    expect(of(audit, 'GateDenied')).toHaveLength(1);
  });

  it('approved: the planned mission runs with exactly the plan’s capabilities (a read outside them is denied)', async () => {
    const { missionId } = await gw.create({ goal: 'tidy up my notes', plan: true });
    const gate = await planGate(missionId);
    await gw.approve(gate.gateId);
    expect(await result(missionId)).toMatchObject({ state: 'completed' });

    const planned = plannedMissionId(missionId);
    expect(await result(planned)).toMatchObject({ state: 'completed', stepsRun: 3 });
    const started = of(await h.audit(planned), 'MissionStarted');
    expect(started).toEqual([expect.objectContaining({ capabilities: [`fs.read:${dir}/**`], stepCount: 3 })]);
    // Step 1 read the notes; step 2's read of a file the mission could reach, but the plan did not ask for, was denied.
    const read = await h.audit(`${planned}/step-0/run-1`);
    expect(of(read, 'ToolCall')).toEqual([
      expect.objectContaining({ toolId: 'fs.read', outcome: 'Completed(NotApplicable)', scopeUsed: `fs.read:${notes}` }),
    ]);
    const denied = await h.audit(`${planned}/step-1/run-1`);
    expect(of(denied, 'ToolCall')).toEqual([]);
    expect(of(denied, 'ScopeDenied')).toEqual([
      expect.objectContaining({ toolAttempted: 'fs.read', heldCapabilities: [`fs.read:${dir}/**`] }),
    ]);
  });

  it('a plan asking for more than the mission holds is refused before any gate opens', async () => {
    const { missionId } = await gw.create({ goal: 'greedy cleanup', plan: true });
    const end = await result(missionId);
    expect(end).toMatchObject({ state: 'failed', stepsRun: 1 });
    expect(end.reason).toMatch(/the plan was refused: the plan asks for fs\.write:\/, which this mission does not hold/);
    const audit = await h.audit(missionId);
    expect(of(audit, 'GateOpened')).toEqual([]);
    expect(await h.audit(plannedMissionId(missionId))).toEqual([]);
  });
});
