/**
 * A database outage of an hour during a mission's local bookkeeping, on the time-skipping server: the
 * mission waits it out and opens once the database answers, with one MissionStarted entry (half the
 * failed attempts had written it before failing), and its history grows by a few events per minute of
 * outage. Retried inside the workflow task (the SDK's default), the same outage kept the task alive by
 * heartbeats, three events every 8 s, in real time: this test then runs into its timeout.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedMissionArgs } from '../../channels/mission-gateway.js';
import type { MissionDefinition, missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { timeSkippingEnv } from '../support/temporal.js';

/** openMission's first 70 attempts fail: about 63 minutes of backoff under the local activity policy. */
const FAILURES = 70;

let env: TestWorkflowEnvironment;
let h: MissionHarness;

beforeAll(async () => {
  env = await timeSkippingEnv();
  h = await startMissionHarness(env, { script: { rules: [{ steps: [{ say: 'checked' }] }] }, outages: { openMission: FAILURES } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await env?.teardown();
});

describe('a database outage during local bookkeeping', () => {
  it('is waited out on workflow timers: the mission opens once, its history grows by a few events a minute', async () => {
    const missionId = `mission-${randomUUID()}`;
    const def: MissionDefinition = {
      missionId,
      goal: 'check the logs',
      steps: [{ text: 'check the logs' }],
      approvers: [{ identity: 'alice', channel: 'telegram' }],
      onExpire: 'fail',
      capabilities: ['fs.read'],
      channel: { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: 'owner' },
    };
    const handle = await env.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: missionId,
      taskQueue: h.taskQueue,
      args: [signedMissionArgs(h.attestor, def)],
    });
    expect((await handle.result()).state).toBe('completed');

    const events = (await handle.fetchHistory()).events ?? [];
    const at = (i: number) => Number(events.at(i)?.eventTime?.seconds ?? 0);
    const minutes = (at(-1) - at(0)) / 60;
    // The outage lasted over an hour of workflow time...
    expect(minutes).toBeGreaterThan(60);
    // ...waited out on workflow timers, not inside one workflow task...
    const timers = events.filter((e) => e.timerStartedEventAttributes).length;
    expect(timers).toBeGreaterThanOrEqual(60);
    // ...at six events per retry, one retry a minute (heartbeats: 22 events a minute).
    expect(events.length).toBeLessThan(8 * minutes);
    const types = (await h.audit(missionId)).map((e) => e.type);
    expect(types.filter((t) => t === 'MissionStarted')).toHaveLength(1);
    expect(types).toContain('MissionEnded');
  }, 120_000);
});
