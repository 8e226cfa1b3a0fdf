/**
 * XState errors inside the workflow sandbox become workflow failures, not silence: a mission
 * continued with a corrupted persisted snapshot (a state the machine does not have) must fail
 * with a clear `Internal` failure instead of retrying its workflow task forever.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MissionDefinition, missionWorkflow } from '../../workflows/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

let tc: TestConnection;
let h: MissionHarness;

beforeAll(async () => {
  tc = await testConnection();
  h = await startMissionHarness({ nativeConnection: tc.connection, namespace: tc.namespace }, { script: { rules: [{ steps: [{ say: 'done' }] }] } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

function definition(): MissionDefinition {
  return {
    missionId: `mission-${randomUUID()}`,
    goal: 'carry on',
    steps: [{ text: 'one' }, { text: 'two' }],
    approvers: [{ identity: 'local-user', channel: 'cli' }],
    onExpire: 'fail',
    capabilities: [],
    channel: { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: `m-${randomUUID()}`, sender: 'owner' },
  };
}

async function failureOf(carried: unknown): Promise<{ message: string; type: string | undefined }> {
  const def = definition();
  const handle = await tc.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: h.taskQueue,
    args: [{ definition: def, carried: carried as never }],
    workflowExecutionTimeout: '60 seconds',
  });
  const err = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause as { message: string; type?: string } | undefined;
  return { message: cause?.message ?? '', type: cause?.type };
}

it('a persisted snapshot naming a state the mission machine lacks fails the mission as Internal', async () => {
  const f = await failureOf({ snapshot: { status: 'active', value: 'teleporting', context: { step: 0, attempt: 1, stepCount: 2, onExpire: 'fail' }, children: {}, historyValue: {} }, gateSeq: 0, stepsRun: 0 });
  expect(f.type).toBe('Internal');
  expect(f.message).toMatch(/mission machine error/);
}, 90_000);

it('a snapshot that is not a machine snapshot at all fails the mission as Internal', async () => {
  const f = await failureOf({ snapshot: 'garbage', gateSeq: 0, stepsRun: 0 });
  expect(f.type).toBe('Internal');
  expect(f.message).toMatch(/mission machine error/);
}, 90_000);
