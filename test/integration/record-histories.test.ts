/**
 * Records fresh histories into test/histories/ when AIVYX_RECORD_HISTORIES=1 (run once after an
 * intentional workflow change that is guarded by `patched()`). Each recording adds a generation named
 * by the day (`<name>.<yyyy-mm-dd>.json`, or AIVYX_RECORD_TAG) beside the earlier ones, which keep
 * replaying the paths that workflows started before the change still take.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import { textContent } from '../../core/message.js';
import { confirmationMissionId, sessionWorkflowId } from '../../workflows/turn-ids.js';
import { findTemporalCli } from '../../infra/temporal/index.js';
import { missionStatusQuery, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, testTemporalAddress, type TestConnection } from '../support/temporal.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

/** Saves a workflow's history as the JSON the UI downloads (historyToJSON trips over vitest's module loading). */
function save(workflowId: string, name: string): void {
  const cli = findTemporalCli({ env: process.env, projectRoot: join(import.meta.dirname, '../..') });
  const json = execFileSync(
    cli,
    ['workflow', 'show', '--workflow-id', workflowId, '--address', testTemporalAddress(), '--output', 'json'],
    { encoding: 'utf8' },
  );
  const tag = process.env.AIVYX_RECORD_TAG ?? new Date().toISOString().slice(0, 10);
  // 'wx': a second recording on the same day fails rather than replacing that day's generation.
  writeFileSync(join(import.meta.dirname, '../histories', `${name}.${tag}.json`), json, { flag: 'wx' });
}

describe.runIf(process.env.AIVYX_RECORD_HISTORIES === '1')('record histories', () => {
  let h: Harness;
  beforeAll(async () => {
    // Recorded in plaintext so the replay test needs no key (the codec does not change command order).
    h = await startHarness({
      codec: false,
      script: {
        rules: [
          { match: 'denied', steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['id'] } }] }, { say: '{{results}}' }] },
          {
            match: 'load metadata',
            steps: [
              { call: [{ tool: 'tools.load', input: { tools: ['fs.metadata'] } }] },
              { call: [{ tool: 'fs.metadata', input: { path: '/etc' } }] },
              { say: 'done: {{results}}' },
            ],
          },
          {
            steps: [
              {
                call: [
                  { tool: 'fs.read', input: { path: '/etc/hostname' } },
                  { tool: 'shell.exec', input: { argv: ['true'] } },
                ],
              },
              { say: 'done: {{results}}' },
            ],
          },
        ],
      },
    });
  });
  afterAll(async () => h?.stop());

  it('records a tool turn, a denied turn and their session', async () => {
    const sessionId = 'recorded-session';
    const a = await h.turn('read and run', { sessionId, messageId: 'm1' });
    const b = await h.turn('this is denied', { sessionId, messageId: 'm2', tier: 'SemiTrusted' });
    save(a.turnId, 'turn-tools');
    save(b.turnId, 'turn-denied');
  });

  it('records a turn that loads a deferred tool and calls it, and the session that passes it on', async () => {
    const sessionId = 'recorded-deferred';
    const a = await h.turn('load metadata of /etc', { sessionId, messageId: 'm-deferred-1' });
    await h.turn('and now?', { sessionId, messageId: 'm-deferred-2' });
    save(a.turnId, 'turn-deferred-tools');
    save(sessionWorkflowId('test', sessionId), 'session-deferred-tools');
  });
});

describe.runIf(process.env.AIVYX_RECORD_HISTORIES === '1')('record mission histories', () => {
  let tc: TestConnection;
  let h: MissionHarness;
  const delivered: string[] = [];
  beforeAll(async () => {
    tc = await testConnection();
    const deliveries = new DeliveryRegistry();
    deliveries.register('rest', { deliverReply: async (r) => void delivered.push(r.turnId) });
    h = await startMissionHarness(
      { nativeConnection: tc.connection, namespace: tc.namespace },
      {
        script: {
          rules: [
            {
              match: 'deploy',
              steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] }, { say: 'deployed: {{results}}' }],
            },
            { steps: [{ say: 'step done' }] },
          ],
        },
        confirmWith: tc.client,
        deliveries,
      },
    );
  }, 120_000);
  afterAll(async () => h?.stop());

  const gateOpen = async (missionId: string): Promise<string> => {
    const handle = tc.client.workflow.getHandle<typeof missionWorkflow>(missionId);
    for (let i = 0; i < 300; i++) {
      const s = await handle.query(missionStatusQuery).catch(() => undefined);
      if (s?.gate?.state === 'open') return s.gate.gateId;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no gate on ${missionId}`);
  };

  it('records an approved mission, an expired one and a confirmation mission with a delivered reply', async () => {
    const missions = new MissionGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: ['shell.exec'] });
    const approved = await missions.create({ goal: 'ship it', steps: ['prepare', 'deploy the build'] });
    await missions.approve(await gateOpen(approved.missionId), 'go');
    await tc.client.workflow.getHandle(approved.missionId).result();
    save(approved.missionId, 'mission-approved');

    const expired = await missions.create({ goal: 'deploy late', reminderAfter: '1s', expireAfter: '2s' });
    await tc.client.workflow.getHandle(expired.missionId).result();
    save(expired.missionId, 'mission-expired');

    const turns = new TurnGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, hub: h.hub });
    const facts = {
      name: 'rest',
      platform: 'Rest' as const,
      trustTier: 'Trusted' as const,
      sessionId: 'recorded-confirm',
      sender: 'alice',
    };
    const turn = await turns.start(
      facts,
      { id: 'confirm-1', sessionId: facts.sessionId, content: textContent('deploy now'), receivedAt: Date.now() },
      () => undefined,
      { to: 'alice' },
    );
    await turn.outcome;
    const missionId = confirmationMissionId(turn.turnWorkflowId);
    await missions.decideAs('approve', await gateOpen(missionId), { identity: 'alice', channel: 'rest', trustTier: 'Trusted' });
    await tc.client.workflow.getHandle(missionId).result();
    if (delivered.length < 2) throw new Error(`expected the turn and its rerun to deliver, got ${delivered.join(', ')}`);
    save(turn.turnWorkflowId, 'turn-escalated-delivered');
    save(missionId, 'mission-confirmation');
  }, 120_000);
});

describe.runIf(process.env.AIVYX_RECORD_HISTORIES === '1')('record a resumed chore', () => {
  let tc: TestConnection;
  let h: MissionHarness;
  const write = (name: string) => ({ tool: 'fs.write', input: { path: `/tmp/aivyx-recorded-${name}`, content: name } });
  beforeAll(async () => {
    tc = await testConnection();
    h = await startMissionHarness(
      { nativeConnection: tc.connection, namespace: tc.namespace },
      {
        script: { rules: [{ steps: [{ call: [write('a')] }, { call: [write('b')] }, { say: 'done: {{results}}' }] }] },
        confirmWith: tc.client,
        agent: { confirmFirst: ['fs.write'] },
      },
    );
  }, 120_000);
  afterAll(async () => h?.stop());

  it('records the reruns of a chore of two confirm-first calls, each resumed from the turn before', async () => {
    const missions = new MissionGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: [] });
    const turns = new TurnGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, hub: h.hub });
    const facts = { name: 'rest', platform: 'Rest' as const, trustTier: 'Trusted' as const, sessionId: 'recorded-resume', sender: 'owner' };
    const turn = await turns.start(
      facts,
      { id: 'resume-1', sessionId: facts.sessionId, content: textContent('two writes'), receivedAt: Date.now() },
      () => undefined,
    );
    await turn.outcome;
    const missionId = confirmationMissionId(turn.turnWorkflowId);
    const owner = { identity: 'owner', channel: 'rest', trustTier: 'Trusted' } as const;
    const handle = tc.client.workflow.getHandle<typeof missionWorkflow>(missionId);
    for (const g of [1, 2]) {
      const gateId = `${missionId}/gate-${g}`;
      for (let i = 0; i < 300 && (await handle.query(missionStatusQuery).catch(() => undefined))?.gate?.gateId !== gateId; i++)
        await new Promise((r) => setTimeout(r, 100));
      await missions.decideAs('approve', gateId, owner);
    }
    await handle.result();
    save(`${missionId}/step-0/run-2`, 'turn-resumed-escalated');
    save(`${missionId}/step-0/run-3`, 'turn-resumed-completed');
  }, 120_000);
});

describe.runIf(process.env.AIVYX_RECORD_HISTORIES === '1')('record a lead and its specialists', () => {
  let h: Harness;
  const ask = (task: string) => ({ tool: 'agent.delegate', input: { specialist: 'helper', task } });
  beforeAll(async () => {
    h = await startHarness({
      codec: false,
      script: {
        rules: [
          { match: 'ask two helpers', steps: [{ call: [ask('helper task one'), ask('helper task two')] }, { say: 'both: {{results}}' }] },
          { match: 'helper task', steps: [{ call: [{ tool: 'fs.read', input: { path: '/etc/hostname' } }] }, { say: 'helped' }] },
        ],
      },
      agent: {
        capabilities: ['fs.read', 'llm.call', 'agent.delegate'],
        specialists: [{ name: 'helper', instructions: 'Help.', capabilities: ['fs.read:/etc/**', 'llm.call'], parallel: true }],
      },
    });
  }, 120_000);
  afterAll(async () => h?.stop());

  it('records a lead whose step delegates to two specialists in parallel, and one of them', async () => {
    const lead = await h.turn('ask two helpers', { sessionId: 'recorded-lead', messageId: 'lead-1' });
    if (lead.outcome.status !== 'Completed') throw new Error(`the lead ended ${lead.outcome.status}`);
    save(lead.turnId, 'turn-delegated');
    save(`${lead.turnId}/tool-0-0/helper`, 'turn-specialist');
  });
});
