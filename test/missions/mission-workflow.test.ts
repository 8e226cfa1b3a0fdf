/**
 * missionWorkflow on the time-skipping server: gates approved on day two, expiry at 72 h with a
 * reminder at 24 h, rejected approvals that change nothing, a worker restart at a gate, and 500
 * steps across continue-as-new. The step turns are real turns (PostgreSQL, attestation, audit).
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelFacts } from '../../core/channel.js';
import type { GateApprover } from '../../machines/index.js';
import {
  approveGateUpdate,
  cancelMissionSignal,
  denyGateUpdate,
  missionStatusQuery,
  type MissionDefinition,
  type MissionResult,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import { MIN_WORKFLOW_CACHE } from '../../infra/config/env-table.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, timeSkippingEnv, updateRefusal } from '../support/temporal.js';

const script = {
  rules: [
    {
      match: 'deploy',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] },
        { say: 'deployed: {{results}}', sayOnFailure: 'not deployed: {{results}}' },
      ],
    },
    { steps: [{ say: 'step done' }] },
  ],
};

const alice: GateApprover = { identity: 'alice', channel: 'telegram', trustTier: 'Trusted' };
const bob: GateApprover = { identity: 'bob', channel: 'email', trustTier: 'SemiTrusted' };

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

function channel(): ChannelFacts {
  return { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: `m-${randomUUID()}`, sender: 'owner' };
}

function definition(steps: string[], over: Partial<MissionDefinition> = {}): MissionDefinition {
  return {
    missionId: `mission-${randomUUID()}`,
    goal: 'ship it',
    steps: steps.map((text) => ({ text })),
    approvers: [{ identity: 'alice', channel: 'telegram' }],
    onExpire: 'fail',
    capabilities: ['shell.exec'],
    channel: channel(),
    ...over,
  };
}

async function start(
  def: MissionDefinition,
  historyLimit?: number,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof missionWorkflow>> {
  return env.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: h.taskQueue,
    args: [signedMissionArgs(h.attestor, def, historyLimit ? { historyLimit } : {})],
  });
}

/** Polls (in real time: the clock does not skip while nothing awaits a result) until a gate is open. */
async function openGate(handle: WorkflowHandle<typeof missionWorkflow>, n = 1): Promise<string> {
  const want = `${handle.workflowId}/gate-${n}`;
  for (let i = 0; i < 400; i++) {
    const s = await handle.query(missionStatusQuery);
    if (s.gate?.gateId === want && ['open', 'reminded', 'escalated'].includes(s.gate.state)) return want;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gate ${want} never opened`);
}

const types = (evs: { type: string }[]) => evs.map((e) => e.type);

describe('missionWorkflow', () => {
  it('a three-day mission whose gate is approved on day two completes, auditing each transition', async () => {
    const def = definition(['prepare', 'deploy the build', 'report'], { reminderAfter: '24h', expireAfter: '72h' });
    const handle = await start(def);
    const gateId = await openGate(handle);
    await env.sleep('30h'); // day two: the 24 h reminder has fired
    expect((await handle.query(missionStatusQuery)).gate?.state).toBe('reminded');
    const res = await handle.executeUpdate(approveGateUpdate, {
      args: [signedDecision(h.attestor, 'approve', gateId, alice, 'looks fine')],
    });
    expect(res).toEqual({ gateId, state: 'approved' });
    const result: MissionResult = await handle.result();
    expect(result).toMatchObject({ state: 'completed', stepsRun: 4 });

    const audit = await h.audit(def.missionId);
    expect(types(audit)).toEqual([
      'MissionStarted',
      'MissionStepFinished',
      'MissionStepFinished',
      'GateOpened',
      'GateReminded',
      'GateApproved',
      'MissionStepFinished',
      'MissionStepFinished',
      'MissionEnded',
    ]);
    expect(audit.find((e) => e.type === 'GateApproved')).toMatchObject({
      approver: 'alice',
      approverChannel: 'telegram',
      approverTier: 'Trusted',
      reasonHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // The rerun of the step ran the granted call (not escalated again) and completed.
    const finished = audit.filter((e) => e.type === 'MissionStepFinished');
    expect(finished.map((e) => (e.type === 'MissionStepFinished' ? `${e.step}:${e.outcome}` : ''))).toEqual([
      '0:Completed',
      '1:Escalated',
      '1:Completed',
      '2:Completed',
    ]);
    const rerun = await h.audit(`${def.missionId}/step-1/run-2`);
    expect(rerun.find((e) => e.type === 'ToolCall')).toMatchObject({ toolId: 'shell.exec', outcome: expect.stringMatching(/^Completed/) });
    expect(h.notices.filter((n) => n.gateId === gateId).map((n) => n.kind)).toEqual(['opened', 'reminder', 'decided']);
    expect((await h.verify()).ok).toBe(true);
  }, 120_000);

  it('no answer in 72 h: the gate expires and the mission ends as the policy says; a reminder fired at 24 h', async () => {
    const def = definition(['deploy now']);
    const handle = await start(def);
    await openGate(handle);
    const result = await handle.result();
    expect(result).toMatchObject({ state: 'expired', reason: 'the gate expired without an answer' });
    const audit = await h.audit(def.missionId);
    expect(types(audit)).toEqual(['MissionStarted', 'MissionStepFinished', 'GateOpened', 'GateReminded', 'GateExpired', 'MissionEnded']);
    // Workflow time since the gate opened, as the durable timers fired.
    const hours = (t: string) =>
      Math.round(((audit.find((e) => e.type === t) as { afterMs?: number } | undefined)?.afterMs ?? -1) / 3_600_000);
    expect(hours('GateReminded')).toBe(24);
    expect(hours('GateExpired')).toBe(72);

    const skip = definition(['deploy now', 'report'], { onExpire: 'skip-step' });
    const h2 = await start(skip);
    await openGate(h2);
    expect(await h2.result()).toMatchObject({ state: 'completed', stepsRun: 2 });
  }, 120_000);

  it('rejects approvals from an unlisted identity, an Untrusted tier, for a closed gate, and a replay — changing nothing', async () => {
    const def = definition(['deploy one', 'deploy two'], {
      secondApprovers: [{ identity: 'bob', channel: 'email' }],
      escalateAfter: '48h',
    });
    const handle = await start(def);
    const gate1 = await openGate(handle);
    const before = await handle.query(missionStatusQuery);
    const attempts: [string, () => Promise<unknown>][] = [
      [
        'not an approver',
        () =>
          handle.executeUpdate(approveGateUpdate, {
            args: [signedDecision(h.attestor, 'approve', gate1, { identity: 'mallory', channel: 'telegram', trustTier: 'Trusted' })],
          }),
      ],
      [
        'may not decide',
        () =>
          handle.executeUpdate(approveGateUpdate, {
            args: [signedDecision(h.attestor, 'approve', gate1, { ...alice, trustTier: 'Untrusted' })],
          }),
      ],
      ['not an approver', () => handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gate1, bob)] })], // not escalated yet
      [
        'has no gate',
        () => handle.executeUpdate(denyGateUpdate, { args: [signedDecision(h.attestor, 'deny', `${def.missionId}/gate-9`, alice)] }),
      ],
    ];
    for (const [msg, attempt] of attempts) expect(await updateRefusal(attempt())).toContain(msg);
    expect(await handle.query(missionStatusQuery)).toEqual(before);

    // After 48 h the gate escalates and the second approver may decide it.
    await env.sleep('49h');
    expect((await handle.query(missionStatusQuery)).gate?.state).toBe('escalated');
    await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gate1, bob)] });
    const gate2 = await openGate(handle, 2);
    // Replaying the approval of gate 1 (closed now) is rejected and does not touch gate 2.
    expect(
      await updateRefusal(handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gate1, bob)] })),
    ).toContain('has no gate');
    expect((await handle.query(missionStatusQuery)).gate).toMatchObject({ gateId: gate2, state: 'open' });
    // Step 1 runs after step 0's command output is in the mission's context (untrusted content): its
    // gate is the owners' alone (issue 29) — the mission's own approvers are not asked and it never escalates.
    expect((await handle.query(missionStatusQuery)).gate?.approvers).toEqual([
      { identity: 'owner', channel: 'mission' },
      { identity: 'local-user', channel: 'cli' },
    ]);
    expect(
      await updateRefusal(handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gate2, alice)] })),
    ).toMatch(/only an owner may decide it/);
    await env.sleep('49h');
    expect((await handle.query(missionStatusQuery)).gate?.state).toBe('reminded');
    const owner: GateApprover = { identity: 'owner', channel: 'mission', trustTier: 'Trusted' };
    await handle.executeUpdate(denyGateUpdate, { args: [signedDecision(h.attestor, 'deny', gate2, owner, 'not today')] });
    expect(await handle.result()).toMatchObject({ state: 'failed', reason: 'gate denied by owner on mission: not today' });
    const audit = types(await h.audit(def.missionId));
    expect(audit.filter((t) => t === 'GateApproved')).toHaveLength(1);
    expect(audit.filter((t) => t === 'GateDenied')).toHaveLength(1);
    expect(audit.filter((t) => t === 'GateEscalated')).toHaveLength(1);
  }, 120_000);

  it('cancelling a mission withdraws its open gate and tells the approvers', async () => {
    const def = definition(['deploy it']);
    const handle = await start(def);
    const gateId = await openGate(handle);
    await handle.signal(cancelMissionSignal, { reason: 'plans changed' });
    expect(await handle.result()).toMatchObject({ state: 'cancelled' });
    expect(types(await h.audit(def.missionId))).toEqual([
      'MissionStarted',
      'MissionStepFinished',
      'GateOpened',
      'GateWithdrawn',
      'MissionEnded',
    ]);
    expect(h.notices.filter((n) => n.gateId === gateId).map((n) => n.kind)).toEqual(['opened', 'withdrawn']);
  }, 120_000);

  // On the shared dev server: the time-skipping server does not move a workflow off a dead
  // worker's sticky queue, the dev server (like production) does.
  it('a worker restarted while the mission waits at a gate: the approval afterwards still completes it', async () => {
    const shared = await testConnection();
    const dev = await startMissionHarness({ nativeConnection: shared.connection, namespace: shared.namespace }, { script });
    try {
      const def = definition(['deploy later', 'report']);
      const handle = await shared.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
        workflowId: def.missionId,
        taskQueue: dev.taskQueue,
        args: [signedMissionArgs(dev.attestor, def)],
      });
      const gateId = await openGate(handle);
      await dev.restartWorker();
      await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(dev.attestor, 'approve', gateId, alice)] });
      expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 3 });
      expect(types(await dev.audit(def.missionId))).toEqual([
        'MissionStarted',
        'MissionStepFinished',
        'GateOpened',
        'GateApproved',
        'MissionStepFinished',
        'MissionStepFinished',
        'MissionEnded',
      ]);
    } finally {
      await dev.stop();
    }
  }, 120_000);

  it('more missions wait than the worker caches: memory stays bounded, and an evicted one replays and completes on approval', async () => {
    const shared = await testConnection();
    // The smallest cache the setting allows, and 8 missions more than it waiting at once.
    const cache = MIN_WORKFLOW_CACHE;
    const dev = await startMissionHarness(
      { nativeConnection: shared.connection, namespace: shared.namespace },
      { script, workflowCache: cache },
    );
    try {
      const defs = Array.from({ length: cache + 8 }, () => definition(['deploy later']));
      const handles = await Promise.all(
        defs.map((def) =>
          shared.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
            workflowId: def.missionId,
            taskQueue: dev.taskQueue,
            args: [signedMissionArgs(dev.attestor, def)],
          }),
        ),
      );
      const gates: string[] = [];
      for (const handle of handles) gates.push(await openGate(handle));
      expect(dev.cachedWorkflows()).toBeLessThanOrEqual(cache);
      // The first mission has not had a task since its gate opened: the least recently used, long evicted.
      for (const i of [0, handles.length - 1]) {
        await handles[i]!.executeUpdate(approveGateUpdate, { args: [signedDecision(dev.attestor, 'approve', gates[i]!, alice)] });
        expect(await handles[i]!.result()).toMatchObject({ state: 'completed', stepsRun: 2 });
        const rerun = await dev.audit(`${defs[i]!.missionId}/step-0/run-2`);
        expect(rerun.filter((e) => e.type === 'ToolCall')).toEqual([
          expect.objectContaining({ toolId: 'shell.exec', outcome: expect.stringMatching(/^Completed/) }),
        ]);
      }
      // The others still wait at their gates.
      expect((await handles[1]!.query(missionStatusQuery)).gate?.state).toBe('open');
      expect(dev.cachedWorkflows()).toBeLessThanOrEqual(cache);
    } finally {
      await dev.stop();
    }
  }, 300_000);

  it('step turns run with the mission capability set: a call outside it is denied, no gate opens', async () => {
    const def = definition(['deploy anyway'], { capabilities: ['fs.read'] });
    const handle = await start(def);
    expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 1 });
    const turn = await h.audit(`${def.missionId}/step-0/run-1`);
    expect(turn.find((e) => e.type === 'TurnStarted')).toMatchObject({ effectiveCapabilities: ['fs.read'] });
    expect(turn.find((e) => e.type === 'ScopeDenied')).toMatchObject({ toolAttempted: 'shell.exec' });
    expect(types(await h.audit(def.missionId))).not.toContain('GateOpened');
  }, 120_000);

  it('a mission of 500 steps completes across continue-as-new', async () => {
    const def = definition(Array.from({ length: 500 }, (_, i) => `step ${i + 1}`));
    const handle = await start(def, 400);
    expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 500 });
    const desc = await handle.describe();
    expect(desc.runId).not.toBe(handle.firstExecutionRunId);
    const audit = types(await h.audit(def.missionId));
    expect(audit.filter((t) => t === 'MissionStepFinished')).toHaveLength(500);
    expect(audit.filter((t) => t === 'MissionStarted')).toHaveLength(1);
  }, 600_000);
});
