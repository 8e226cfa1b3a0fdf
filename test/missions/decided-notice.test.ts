/**
 * An approval moves the mission at once: telling the approvers how their gate ended goes out beside
 * the mission's next step, not before it (one round trip off every decision, docs/BENCHMARKS.md).
 * What must still hold: the notice is sent, once, and the mission does not end before it went out.
 * Here the approvers' channel holds every "decided" notice until the test lets it go: the step that
 * was waiting at the gate runs, and the step after it, while the notice is still on its way.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import type { GateApprover } from '../../machines/index.js';
import {
  approveGateUpdate,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

const alice: GateApprover = { identity: 'alice', channel: 'telegram', trustTier: 'Trusted' };

let tc: TestConnection;
let h: MissionHarness;
let release!: () => void;
const released = new Promise<void>((r) => (release = r));
const delivered: MissionNotice[] = [];

beforeAll(async () => {
  tc = await testConnection();
  const deliveries = new DeliveryRegistry();
  deliveries.register('telegram', {
    async notifyGate(notice) {
      if (notice.kind === 'decided') await released;
      delivered.push(notice);
    },
  });
  h = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    {
      deliveries,
      script: {
        rules: [
          {
            match: 'deploy',
            steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] }, { say: 'deployed' }],
          },
          { steps: [{ say: 'step done' }] },
        ],
      },
    },
  );
}, 120_000);

afterAll(async () => {
  release();
  await h?.stop();
});

it('an approved gate’s step, and the next, run while the “decided” notice is still on its way; the mission ends after it', async () => {
  const def: MissionDefinition = {
    missionId: `mission-${randomUUID()}`,
    goal: 'ship it',
    steps: [{ text: 'deploy the build' }, { text: 'report' }],
    approvers: [{ identity: 'alice', channel: 'telegram' }],
    onExpire: 'fail',
    capabilities: ['shell.exec'],
    channel: { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: `m-${randomUUID()}`, sender: 'owner' },
  };
  const handle = await tc.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: h.taskQueue,
    args: [signedMissionArgs(h.attestor, def)],
  });
  const gateId = `${def.missionId}/gate-1`;
  await until(async () => (await handle.query(missionStatusQuery)).gate?.gateId === gateId, 'the gate to open');
  await until(async () => delivered.some((n) => n.kind === 'opened'), 'the opened notice');
  await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', gateId, alice)] });

  // Both steps finish while the decided notice is held.
  const finished = async () =>
    (await h.audit(def.missionId)).flatMap((e) => (e.type === 'MissionStepFinished' ? [`${e.step}:${e.outcome}`] : []));
  await until(async () => (await finished()).includes('1:Completed'), 'the steps after the approval');
  expect(await finished()).toEqual(['0:Escalated', '0:Completed', '1:Completed']);
  expect(delivered.map((n) => n.kind)).toEqual(['opened']);
  // ... and the mission has not ended: it waits for its notice.
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect((await h.audit(def.missionId)).map((e) => e.type)).not.toContain('MissionEnded');

  release();
  expect(await handle.result()).toMatchObject({ state: 'completed' });
  expect(delivered.map((n) => `${n.kind}:${n.gateId}`)).toEqual([`opened:${gateId}`, `decided:${gateId}`]);
  expect((await h.audit(def.missionId)).at(-1)?.type).toBe('MissionEnded');
}, 120_000);

async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
