/**
 * Operator dashboard fields of missionWorkflow on the shared dev server (the time-skipping server
 * has no visibility): with `dashboard: true` the mission upserts AivyxMissionState, AivyxOpenGate
 * and AivyxApprover on every transition, so an operator finds missions waiting at a gate with a
 * visibility query; the start carries staticSummary/staticDetails and the workflow sets current details.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AivyxApprover, AivyxMissionState, AivyxOpenGate } from '../../core/search-attributes.js';
import type { GateApprover } from '../../machines/index.js';
import {
  approveGateUpdate,
  missionStartMetadata,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

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

let tc: TestConnection;
let h: MissionHarness;

beforeAll(async () => {
  tc = await testConnection();
  h = await startMissionHarness({ nativeConnection: tc.connection, namespace: tc.namespace }, { script });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

function definition(steps: string[]): MissionDefinition {
  return {
    missionId: `mission-${randomUUID()}`,
    goal: 'ship it',
    steps: steps.map((text) => ({ text })),
    approvers: [{ identity: 'alice', channel: 'telegram' }],
    onExpire: 'fail',
    capabilities: ['shell.exec'],
    channel: { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: `m-${randomUUID()}`, sender: 'owner' },
  };
}

/** Polls a visibility query (eventually consistent) until it lists `workflowId`. */
async function listed(query: string, workflowId: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for await (const wf of tc.client.workflow.list({ query })) if (wf.workflowId === workflowId) return;
    if (Date.now() > until) throw new Error(`${workflowId} not listed by ${query} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function openGate(handle: WorkflowHandle<typeof missionWorkflow>): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const s = await handle.query(missionStatusQuery);
    if (s.state === 'waiting' && s.gate?.state === 'open') return s.gate.gateId;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('gate never opened');
}

describe('mission dashboard fields', () => {
  it('a mission at a gate is found by state and gate, and the state attribute moves to completed on approval', async () => {
    const def = definition(['prepare', 'deploy the build']);
    const handle = await tc.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: def.missionId,
      taskQueue: h.taskQueue,
      args: [signedMissionArgs(h.attestor, def, { dashboard: true })],
      ...missionStartMetadata(def),
    });
    const gateId = await openGate(handle);
    const q = `WorkflowId = '${def.missionId}'`;
    await listed(`${q} AND AivyxMissionState = 'waiting'`, def.missionId);
    await listed(`AivyxMissionState = 'waiting' AND AivyxOpenGate = '${gateId}'`, def.missionId);
    await listed(`${q} AND AivyxApprover = 'alice'`, def.missionId);

    const desc = await handle.describe();
    expect(desc.typedSearchAttributes.get(AivyxMissionState)).toBe('waiting');
    expect(await desc.staticSummary()).toBe('Mission: ship it');
    expect(await desc.staticDetails()).toContain('2. deploy the build');
    const meta = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(meta.currentDetails).toContain('**waiting**');
    expect(meta.currentDetails).toContain(gateId);
    // The handlers are described for the UI.
    const defs = (
      meta as {
        definition?: {
          updateDefinitions?: { name: string; description?: string }[];
          signalDefinitions?: { name: string; description?: string }[];
          queryDefinitions?: { name: string; description?: string }[];
        };
      }
    ).definition;
    expect(defs?.updateDefinitions?.map((d) => d.name).sort()).toEqual(['approveGate', 'denyGate', 'missionEvent']);
    for (const d of [
      ...(defs?.updateDefinitions ?? []),
      ...(defs?.signalDefinitions ?? []),
      ...(defs?.queryDefinitions ?? []).filter((x) => !x.name.startsWith('__')),
    ])
      expect(d.description, d.name).toBeTruthy();

    await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gateId, alice)] });
    expect(await handle.result()).toMatchObject({ state: 'completed' });
    await listed(`${q} AND AivyxMissionState = 'completed'`, def.missionId);
    const done = await handle.describe();
    expect(done.typedSearchAttributes.get(AivyxOpenGate)).toBeUndefined();
    expect(done.typedSearchAttributes.get(AivyxApprover)).toBe('alice');
  }, 60_000);

  it('a mission on a timer is found as waiting, with what it waits for in its details, and its wait shown in the start details', async () => {
    const def = { ...definition([]), steps: [{ kind: 'wait' as const, for: '1h' }, { text: 'after the wait' }] };
    const handle = await tc.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: def.missionId,
      taskQueue: h.taskQueue,
      args: [signedMissionArgs(h.attestor, def, { dashboard: true })],
      ...missionStartMetadata(def),
    });
    await listed(`WorkflowId = '${def.missionId}' AND AivyxMissionState = 'waiting'`, def.missionId);
    const desc = await handle.describe();
    expect(desc.typedSearchAttributes.get(AivyxOpenGate)).toBeUndefined();
    expect(await desc.staticDetails()).toContain('1. wait 1h');
    const meta = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(meta.currentDetails).toMatch(/- waiting: a timer until \S+Z \(wait 1h\)/);
    await handle.cancel();
    expect(await handle.result()).toMatchObject({ state: 'cancelled', stepsRun: 0 });
  }, 60_000);
});
