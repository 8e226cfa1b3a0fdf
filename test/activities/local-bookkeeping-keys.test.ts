/**
 * A turn's bookkeeping, and a mission's on its way to a gate, run as local activities (docs/IDEMPOTENCY.md). A local activity writes before
 * its workflow task completes; if that task fails, the retry may give the activity's sequence number to
 * another command (a cancel or an Update that arrived meanwhile) and the activity another number. So a
 * local activity keys its entry by what it records: run again under any number, it writes nothing new,
 * and never lands on another command's key. A remote activity keeps its activity id as the key.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { wireTurnActivities } from '../../app/wiring.js';
import { signedMissionArgs } from '../../channels/mission-gateway.js';
import { buildTurnRequest } from '../../channels/turn-client.js';
import type { ChannelFacts } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { auditEntriesForTurn } from '../../infra/audit/index.js';
import { openDatabase, type OpenDatabase } from '../../infra/db/index.js';
import { createAttestor, type Attestor } from '../../infra/attestation.js';
import { openKeyring } from '../../infra/keyring.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

let database: { url: string; drop(): Promise<void> };
let opened: OpenDatabase;
let activities: ReturnType<typeof wireTurnActivities>;
let attestor: Attestor;

beforeAll(async () => {
  database = await createTestDatabase('aivyx_lakeys');
  opened = await openDatabase({ databaseUrl: database.url });
  const master = await openKeyring(opened.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  attestor = createAttestor(master.subkey('attestation'));
  activities = wireTurnActivities({
    db: opened.db,
    master,
    hub: new StreamHub(),
    llm: createScriptedProvider({ rules: [{ steps: [{ say: 'ok' }] }] }),
    agent: { capabilities: ['fs.read'], budgetMs: 60_000, confirmFirst: [] },
  });
});
afterAll(async () => {
  await opened?.close();
  await database?.drop();
});

const channel: ChannelFacts = { name: 'rest', platform: 'Rest', trustTier: 'Trusted', sessionId: 's-keys', sender: 'owner' };

/** The activity as the worker runs it for workflow `turnId`, run `run-1`, under sequence number `seq`. */
function as(turnId: string, seq: string, isLocal: boolean): MockActivityEnvironment {
  return new MockActivityEnvironment({
    activityId: seq,
    isLocal,
    workflowExecution: { workflowId: turnId, runId: 'run-1' },
  });
}

describe('bookkeeping keys', () => {
  it('a local activity run again under another sequence number writes no second entry', async () => {
    const req = buildTurnRequest(channel, { id: 'm-local', sessionId: channel.sessionId, content: textContent('hi'), receivedAt: 1 });
    const denial = { turnId: req.turnId, step: 0, index: 1, call: { callId: 'c1', tool: 'fs.write' }, scope: 'fs.write:/etc/x', held: [] };
    const outcome = { status: 'Completed' as const, finalMessage: 'ok', toolCallsMade: 0, durationMs: 10 };
    // First attempt: numbers 3 and 5. The retried workflow task gave 3 and 5 to other commands: 4 and 6.
    for (const [denySeq, endSeq, durationMs] of [
      ['3', '5', 40],
      ['4', '6', 55],
    ] as const) {
      await as(req.turnId, denySeq, true).run(activities.recordScopeDenied, denial);
      await as(req.turnId, endSeq, true).run(activities.finalizeTurn, {
        request: req,
        sessionKey: `session/rest/${channel.sessionId}`,
        outcome,
        durationMs,
      });
    }
    const entries = await auditEntriesForTurn(opened.db, req.turnId);
    expect(entries.map((e) => [e.eventType, e.idemKey])).toEqual([
      ['ScopeDenied', `${req.turnId}/run-1/tool-0-1/denied/fs.write:/etc/x`],
      ['TurnEnded', `${req.turnId}/run-1/ended`],
    ]);
    // The first measurement stands.
    expect(entries[1]!.event).toMatchObject({ type: 'TurnEnded', durationMs: 40 });
  });

  it('a remote activity keeps its activity id as the key (as histories recorded before expect)', async () => {
    const req = buildTurnRequest(channel, { id: 'm-remote', sessionId: channel.sessionId, content: textContent('hi'), receivedAt: 1 });
    await as(req.turnId, '7', false).run(activities.finalizeTurn, {
      request: req,
      sessionKey: `session/rest/${channel.sessionId}`,
      outcome: { status: 'Completed' as const, finalMessage: 'ok', toolCallsMade: 0, durationMs: 10 },
      durationMs: 10,
    });
    expect((await auditEntriesForTurn(opened.db, req.turnId)).map((e) => e.idemKey)).toEqual([`${req.turnId}/run-1/7`]);
  });
});

describe('mission bookkeeping keys', () => {
  const mission = (missionId: string) => ({
    missionId,
    goal: 'deploy',
    steps: [{ text: 'deploy the build' }],
    approvers: [{ identity: 'alice', channel: 'telegram' }],
    onExpire: 'fail' as const,
    capabilities: ['shell.exec'],
    channel: { name: 'cli', platform: 'Local' as const, trustTier: 'Trusted' as const, sessionId: missionId, sender: 'owner' },
  });

  /** Step 0's first attempt of `missionId` finished with `outcome`. */
  const stepFinished = (missionId: string, outcome: string) => ({
    type: 'MissionStepFinished' as const,
    turnId: missionId,
    missionId,
    step: 0,
    attempt: 1,
    stepTurnId: `${missionId}/step-0/run-1`,
    outcome,
  });

  it('opening, a finished step and a gate, run again under other sequence numbers, write no second entry', async () => {
    const def = mission('mission-local-keys');
    const args = signedMissionArgs(attestor, def);
    const gate = { definition: def, gateId: `${def.missionId}/gate-1`, step: 0, tool: 'shell.exec', input: { argv: ['echo', 'hi'] } };
    const finished = stepFinished(def.missionId, 'Escalated');
    // The retried workflow task gave the first numbers to other commands (an Update's activity arrived meanwhile).
    for (const [openSeq, finishSeq, gateSeq] of [
      ['1', '3', '4'],
      ['2', '4', '5'],
    ] as const) {
      await expect(as(def.missionId, openSeq, true).run(activities.openMission, { args })).resolves.toMatchObject({ ok: true });
      await as(def.missionId, finishSeq, true).run(activities.recordMissionEvent, finished);
      await as(def.missionId, gateSeq, true).run(activities.openGate, gate);
    }
    const entries = await auditEntriesForTurn(opened.db, def.missionId);
    expect(entries.map((e) => [e.eventType, e.idemKey])).toEqual([
      ['MissionStarted', `${def.missionId}/run-1/MissionStarted`],
      ['MissionStepFinished', `${def.missionId}/run-1/MissionStepFinished/step=0/attempt=1/stepTurnId=${def.missionId}/step-0/run-1`],
      ['GateOpened', `${def.missionId}/run-1/GateOpened/gateId=${def.missionId}/gate-1/step=0`],
    ]);
  });

  it('a local activity records only what it names uniquely; a different entry under the same key fails, not retried', async () => {
    const def = mission('mission-local-guard');
    // A reminder is decided by a timer a retried task may see later: only a remote activity records it.
    await expect(
      as(def.missionId, '9', true).run(activities.recordMissionEvent, {
        type: 'GateReminded' as const,
        turnId: def.missionId,
        missionId: def.missionId,
        gateId: `${def.missionId}/gate-1`,
        afterMs: 1,
      }),
      // Internal is non-retryable in the mission policy (core/activity-policies.ts).
    ).rejects.toMatchObject({ type: 'Internal', message: expect.stringMatching(/recorded by a remote activity/) });
    const finished = (outcome: string) => stepFinished(def.missionId, outcome);
    await as(def.missionId, '3', true).run(activities.recordMissionEvent, finished('Escalated'));
    // The same key for another entry is the integrity alarm: the mission fails instead of retrying forever.
    await expect(as(def.missionId, '4', true).run(activities.recordMissionEvent, finished('Completed'))).rejects.toMatchObject({
      type: 'Audit',
      nonRetryable: true,
      message: expect.stringMatching(/integrity alarm/),
    });
    expect((await auditEntriesForTurn(opened.db, def.missionId)).map((e) => e.eventType)).toEqual(['MissionStepFinished']);
  });

  it('a remote mission activity keeps its activity id as the key', async () => {
    const def = mission('mission-remote-keys');
    await as(def.missionId, '7', false).run(activities.recordMissionEvent, {
      type: 'MissionEnded' as const,
      turnId: def.missionId,
      missionId: def.missionId,
      state: 'completed',
    });
    expect((await auditEntriesForTurn(opened.db, def.missionId)).map((e) => e.idemKey)).toEqual([`${def.missionId}/run-1/7`]);
  });
});
