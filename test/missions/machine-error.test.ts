/**
 * XState errors inside the workflow sandbox become workflow failures, not silence: a mission
 * continued with a corrupted persisted snapshot (a state the machine does not have) must fail
 * with a clear `Internal` failure instead of retrying its workflow task forever.
 *
 * Carried state is authority too: only a verified run hands it to the run it continues as new
 * (DESIGN.md D5). A mission *started* with carried state — a copy of a continued run's arguments,
 * or a forgery — is refused before anything is restored from it.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signedMissionArgs } from '../../channels/mission-gateway.js';
import { restoreMission } from '../../workflows/mission/restore.js';
import type { MissionDefinition, missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

let tc: TestConnection;
let h: MissionHarness;

beforeAll(async () => {
  tc = await testConnection();
  h = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    { script: { rules: [{ steps: [{ say: 'done' }] }] } },
  );
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

/** What `restoreMission` throws for `carried` (it must be a non-retryable Internal failure). */
function restoreFailure(carried: unknown): ApplicationFailure {
  try {
    restoreMission(signedMissionArgs(h.attestor, definition(), { carried: carried as never }), () => undefined);
  } catch (e) {
    expect(e).toBeInstanceOf(ApplicationFailure);
    return e as ApplicationFailure;
  }
  throw new Error('the snapshot was restored');
}

it('a persisted snapshot naming a state the mission machine lacks fails the mission as Internal', () => {
  const f = restoreFailure({
    snapshot: {
      status: 'active',
      value: 'teleporting',
      context: { step: 0, attempt: 1, stepCount: 2, onExpire: 'fail' },
      children: {},
      historyValue: {},
    },
    gateSeq: 0,
    stepsRun: 0,
  });
  expect(f.type).toBe('Internal');
  expect(f.nonRetryable).toBe(true);
  expect(f.message).toMatch(/mission machine error/);
});

it('a snapshot that is not a machine snapshot at all fails the mission as Internal', () => {
  const f = restoreFailure({ snapshot: 'garbage', gateSeq: 0, stepsRun: 0 });
  expect(f.type).toBe('Internal');
  expect(f.message).toMatch(/mission machine error/);
});

it('a mission started (not continued) with carried state is refused before any of it is restored, and audited', async () => {
  const def = definition();
  const handle = await tc.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: h.taskQueue,
    args: [signedMissionArgs(h.attestor, def, { carried: { snapshot: 'garbage', gateSeq: 0, stepsRun: 0 } })],
    workflowExecutionTimeout: '60 seconds',
  });
  const err = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause as { message: string; type?: string } | undefined;
  expect(cause?.type).toBe('CapabilityDenied');
  expect(cause?.message).toMatch(/not continued from one/);
  expect(await h.audit(def.missionId)).toEqual([
    expect.objectContaining({ type: 'MissionRejected', reason: expect.stringMatching(/not continued from one/) }),
  ]);
}, 90_000);
