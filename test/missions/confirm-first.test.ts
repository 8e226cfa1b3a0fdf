/**
 * Confirm-first in a plain conversation: a channel turn that ends `Escalated` opens a
 * confirmation mission whose first gate is exactly the pending call. The sender (on a tier that
 * may approve) and the owner may decide it; once approved, the message reruns with a one-shot
 * grant and exactly that call runs, once. On the shared dev server.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { ChannelFacts, TurnRequest } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { confirmationDefinition, createConfirmations } from '../../app/confirmations.js';
import { gateApproversFor } from '../../core/gate-approvers.js';
import { confirmationMissionId } from '../../workflows/turn-ids.js';
import type { missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { openGateOf as openGate, startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-confirm-'));
const download = join(dir, 'download.txt');
const filed = join(dir, 'filed.txt');
writeFileSync(download, 'a stranger wrote this');

const script = {
  rules: [
    {
      match: 'deploy',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] },
        { say: 'deployed: {{result.0.output.stdout}}', sayOnFailure: 'not deployed: {{results}}' },
      ],
    },
    // Reads a downloaded file (outside any trusted root: untrusted), then writes one: fs.write is not confirm-first.
    {
      match: 'file the download',
      steps: [
        { call: [{ tool: 'fs.read', input: { path: download } }] },
        { call: [{ tool: 'fs.write', input: { path: filed, content: 'filed' } }] },
        { say: 'filed: {{result.0.status}}' },
      ],
    },
    { steps: [{ say: 'ok' }] },
  ],
};

let tc: TestConnection;
let h: MissionHarness;
let turns: TurnGateway;
let missions: MissionGateway;

beforeAll(async () => {
  tc = await testConnection();
  h = await startMissionHarness({ nativeConnection: tc.connection, namespace: tc.namespace }, { script, confirmWith: tc.client });
  turns = new TurnGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, hub: h.hub });
  missions = new MissionGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: [] });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

// A Trusted channel: SemiTrusted ceilings hold no shell.exec, so there the call is denied before confirm-first.
const rest = (sender: string): ChannelFacts => ({
  name: 'rest',
  platform: 'Rest',
  trustTier: 'Trusted',
  sessionId: `rest-${randomUUID()}`,
  sender,
});

const openGateOf = (missionId: string) => openGate(tc.client, missionId);

describe('confirm-first in a conversation', () => {
  it('an escalated chat turn opens a gate for exactly its call; the sender approves; the call runs once', async () => {
    const facts = rest('alice');
    const message = { id: randomUUID(), sessionId: facts.sessionId, content: textContent('deploy the site'), receivedAt: Date.now() };
    const events: string[] = [];
    const turn = await turns.start(facts, message, (e) => {
      if (e.type === 'status') events.push(e.text);
    });
    const outcome = await turn.outcome;
    expect(outcome).toMatchObject({ status: 'Escalated', pendingTool: 'shell.exec' });
    const missionId = confirmationMissionId(turn.turnWorkflowId);
    expect(events.join('\n')).toContain(`approval needed: gate ${missionId}/gate-1`);

    const gate = await openGateOf(missionId);
    expect(gate.gateId).toBe(`${missionId}/gate-1`);
    expect(gate.approvers).toEqual([
      { identity: 'alice', channel: 'rest' },
      { identity: 'local-user', channel: 'cli' },
    ]);

    // The same sender on an Untrusted footing, or someone else, cannot decide it.
    await expect(missions.decideAs('approve', gate.gateId, { identity: 'alice', channel: 'rest', trustTier: 'Untrusted' })).rejects.toThrow(
      /Untrusted channel may not decide/,
    );
    await expect(missions.decideAs('approve', gate.gateId, { identity: 'mallory', channel: 'rest', trustTier: 'Trusted' })).rejects.toThrow(
      /not an approver/,
    );

    // Opening it again (a retried finalizeTurn) finds the same mission.
    const handle = tc.client.workflow.getHandle<typeof missionWorkflow>(missionId);
    const firstRun = (await handle.describe()).runId;
    const req: TurnRequest = { turnId: turn.turnWorkflowId, message, channel: facts };
    const again = await createConfirmations({
      client: tc.client,
      taskQueue: h.taskQueue,
      attestor: h.attestor,
      capabilities: ['shell.exec'],
    }).open(req, outcome as never, { approvers: gate.approvers, taintedBy: [] });
    expect(again.gateId).toBe(gate.gateId);
    expect((await handle.describe()).runId).toBe(firstRun);

    expect(
      await missions.decideAs('approve', gate.gateId, { identity: 'alice', channel: 'rest', trustTier: 'Trusted' }, 'go ahead'),
    ).toEqual({ gateId: gate.gateId, state: 'approved' });
    expect(await handle.result()).toMatchObject({ missionId, state: 'completed', stepsRun: 1 });

    const audit = await h.audit(missionId);
    expect(audit.find((e) => e.type === 'MissionStepFinished')).toMatchObject({ stepTurnId: turn.turnWorkflowId, outcome: 'Escalated' });
    expect(audit.find((e) => e.type === 'GateApproved')).toMatchObject({
      approver: 'alice',
      approverChannel: 'rest',
      approverTier: 'Trusted',
      reasonHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // The audit log holds no user text: the approver's reason only as its hash.
    expect(JSON.stringify(audit)).not.toContain('go ahead');
    const asked = (await h.audit(turn.turnWorkflowId)).find((e) => e.type === 'ToolCall');
    const ran = (await h.audit(`${missionId}/step-0/run-2`)).filter((e) => e.type === 'ToolCall');
    expect(asked).toMatchObject({ toolId: 'shell.exec', outcome: 'RequiresEscalation' });
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatchObject({
      toolId: 'shell.exec',
      outcome: expect.stringMatching(/^Completed/),
      inputHash: (asked as { inputHash: string }).inputHash,
    });
    expect((await h.verify()).ok).toBe(true);
  }, 120_000);

  it('a write after untrusted content is gated (not confirm-first) and shows why; approved, exactly that write runs once', async () => {
    const facts = rest('owner');
    const message = { id: randomUUID(), sessionId: facts.sessionId, content: textContent('file the download'), receivedAt: Date.now() };
    const turn = await turns.start(facts, message, () => undefined);
    const outcome = await turn.outcome;
    expect(outcome).toMatchObject({
      status: 'Escalated',
      pendingTool: 'fs.write',
      reason: 'fs.write after untrusted content (a file outside the trusted roots): a person must approve this exact call',
    });
    expect(existsSync(filed)).toBe(false);
    const asked = (await h.audit(turn.turnWorkflowId)).filter((e) => e.type === 'ToolCall');
    expect(asked.map((e) => [e.toolId, e.outcome, e.taintedBy])).toEqual([
      ['fs.read', 'Completed(NotApplicable)', undefined],
      ['fs.write', 'RequiresEscalation', ['a file outside the trusted roots']],
    ]);

    const missionId = confirmationMissionId(turn.turnWorkflowId);
    const gate = await openGateOf(missionId);
    await missions.decideAs('approve', gate.gateId, { identity: 'owner', channel: 'rest', trustTier: 'Trusted' });
    expect(await tc.client.workflow.getHandle<typeof missionWorkflow>(missionId).result()).toMatchObject({ state: 'completed' });
    expect(existsSync(filed)).toBe(true);
    const ran = (await h.audit(`${missionId}/step-0/run-2`)).filter((e) => e.type === 'ToolCall' && e.toolId === 'fs.write');
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatchObject({ outcome: 'Completed(Verified)', taintedBy: ['a file outside the trusted roots'] });
  }, 120_000);

  it('only the owner may decide what an Untrusted sender asked for, or what follows untrusted content', () => {
    const facts: ChannelFacts = {
      name: 'email',
      platform: 'Email',
      trustTier: 'Untrusted',
      sessionId: 's',
      sender: 'stranger@example.com',
    };
    const asker = (f: ChannelFacts) => ({ identity: f.sender, channel: f.name, trustTier: f.trustTier });
    const taintedBy = ['a message from stranger@example.com on email (Untrusted)'];
    const approvers = gateApproversFor(asker(facts), taintedBy, ['email:owner@example.com']);
    expect(approvers).toEqual([
      { identity: 'local-user', channel: 'cli' },
      { identity: 'owner@example.com', channel: 'email' },
    ]);
    const def = confirmationDefinition(
      { turnId: 'turn/email/x', message: { id: 'x', sessionId: 's', content: textContent('delete it'), receivedAt: 0 }, channel: facts },
      { status: 'Escalated', reason: 'confirm-first', pendingTool: 'fs.delete', pendingInput: { path: '/tmp/x' }, toolCallsMade: 0 },
      { approvers, taintedBy },
      { capabilities: ['fs.delete'] },
    );
    expect(def.approvers).toEqual(approvers);
    expect(def.taintedBy).toEqual(taintedBy);
    expect(def.pendingGate).toEqual({ turnId: 'turn/email/x', tool: 'fs.delete', input: { path: '/tmp/x' }, reason: 'confirm-first' });
    // A SemiTrusted member of a group is asked nothing once the turn read untrusted content (their own message, say).
    const member: ChannelFacts = { name: 'telegram', platform: 'Telegram', trustTier: 'SemiTrusted', sessionId: 's', sender: '200000004' };
    expect(gateApproversFor(asker(member), ['a message from 200000004 on telegram (SemiTrusted)'], [])).toEqual([
      { identity: 'local-user', channel: 'cli' },
    ]);
    // Untainted, the asker decides their own confirm-first call where their tier may approve.
    expect(gateApproversFor(asker(member), [], [])).toEqual([
      { identity: '200000004', channel: 'telegram' },
      { identity: 'local-user', channel: 'cli' },
    ]);
    // The owner at their machine stays an approver of what follows untrusted content.
    expect(gateApproversFor(asker(rest('owner')), ['a file outside the trusted roots'], [])).toEqual([
      { identity: 'owner', channel: 'rest' },
      { identity: 'local-user', channel: 'cli' },
    ]);
  });
});
