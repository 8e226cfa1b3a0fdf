/**
 * A `waitFor` wait ended by a lie (issue 12, red team): the attacker completes the activities that
 * check an event — `verifyMissionEvent` answers ok, `settleWait` answers "event" — with results of
 * their choosing, for a junk event Update. The workflow believes the wait ended; the worker does not:
 * the step after the wait is refused (no verified event, no recorded outcome), and nothing of it runs.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedMissionArgs } from '../../channels/mission-gateway.js';
import { createAttestor } from '../../infra/attestation.js';
import type { MissionDefinition } from '../../workflows/mission-messages.js';
import { missionEventUpdate, missionStatusQuery, missionWaitKey, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { timeSkippingEnv } from '../support/temporal.js';

let env: TestWorkflowEnvironment;
let h: MissionHarness;

beforeAll(async () => {
  env = await timeSkippingEnv();
  h = await startMissionHarness(env, {
    script: { rules: [{ steps: [{ say: 'the step ran' }] }] },
    forgedCompletions: {
      verifyMissionEvent: async () => ({ ok: true }),
      settleWait: async () => 'event',
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await env?.teardown();
});

describe('a wait ended by forged activity completions', () => {
  it('the workflow believes the event came; the step after it is refused by the worker and never runs', async () => {
    const missionId = `mission-${randomUUID()}`;
    const def: MissionDefinition = {
      missionId,
      goal: 'after Bob says done, deploy',
      steps: [{ kind: 'waitFor', event: { source: 'telegram', from: '42', contains: 'done' }, within: '1d' }, { text: 'deploy it' }],
      approvers: [{ identity: 'local-user', channel: 'cli' }],
      onExpire: 'fail',
      capabilities: ['fs.read'],
      channel: { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: 'local-user' },
    };
    const handle = await env.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: missionId,
      taskQueue: h.taskQueue,
      args: [signedMissionArgs(h.attestor, def)],
    });
    for (let i = 0; (await handle.query(missionStatusQuery)).state !== 'waiting'; i++) {
      if (i > 400) throw new Error('never waited');
      await new Promise((r) => setTimeout(r, 50));
    }
    const waitKey = missionWaitKey(missionId, 0);
    const facts = { source: 'telegram' as const, from: '42', contains: 'done', tier: 'Trusted' };
    const junk = createAttestor(new Uint8Array(32).fill(9)).seal('mission-event', missionId, { waitKey, eventId: 'e1', facts });
    expect(await handle.executeUpdate(missionEventUpdate, { args: [{ waitKey, eventId: 'e1', facts, proof: junk }] })).toEqual({
      accepted: true,
    });

    const err = await handle.result().catch((e: unknown) => e);
    // The workflow failed on the worker's refusal (an activity failure whose cause says why).
    expect(String((err as { cause?: { cause?: { message?: string } } }).cause?.cause?.message)).toMatch(
      /step 2 may not run: the wait at step 1 has no outcome the worker recorded/,
    );
    // Nothing of step 2 ran.
    expect(await h.audit(`${missionId}/step-1/run-1`)).toEqual([]);
  });
});
