/**
 * `mission.list` and `mission.cancel` through real turns on the shared dev server, with the payload
 * codec and the mission gateway as the port, as `aivyx up` wires them. Alice and Bob are allowlisted
 * Telegram users (SemiTrusted, the tier policy says `own`): each lists only the missions that name
 * them. A cancel is confirm-first and the asker may approve their own request, so the attack is the
 * whole path: Bob asks to cancel Alice's mission and approves it himself — the approved rerun is
 * refused as if the mission did not exist, audited, and hers is still running. Alice's approved cancel
 * ends hers `cancelled`. A mission naming Alice under a proof this install did not make is not hers.
 * The owner on the CLI sees them all; an Untrusted sender is denied by scope before anything is asked.
 * A mission drafted after untrusted content (its goal names a stranger) lists with that content's
 * label: the goal does not make the stranger's address the owner's word.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_APPROVER, MissionGateway, startMission } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { ChannelFacts } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { createAttestor } from '../../infra/attestation.js';
import { confirmationGateId, confirmationMissionId, confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import { missionStatusQuery, type MissionResult, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

/** A downloaded mail (no trusted roots: untrusted) that invites someone to lunch. */
const mail = join(mkdtempSync(join(tmpdir(), 'aivyx-mission-control-')), 'lunch.txt');
writeFileSync(mail, 'Lunch on Friday? Write to mallory@evil.example to confirm.');
/** Messages `channel.send` really sent. */
const sent: { to: string; text: string }[] = [];

const script = {
  rules: [
    {
      // The model took the mail's words into the goal: the mission is created after untrusted content.
      match: 'remind me in 1h about the lunch',
      steps: [
        { call: [{ tool: 'fs.read', input: { path: mail } }] },
        {
          call: [
            { tool: 'mission.create', input: { goal: 'Lunch with mallory@evil.example', steps: [{ wait: '1h' }, { notify: 'lunch' }] } },
          ],
        },
        { say: 'created {{result.0.output.missionId}}' },
      ],
    },
    {
      // Later, after untrusted content again: the listing must not make the goal's address the owner's.
      match: 'message the lunch guest on test',
      steps: [
        { call: [{ tool: 'fs.read', input: { path: mail } }] },
        { call: [{ tool: 'mission.list', input: { limit: 50 } }] },
        { call: [{ tool: 'channel.send', input: { channel: 'test', to: 'mallory@evil.example', text: 'see you Friday' } }] },
        { say: 'sent: {{result.0.status}}', sayOnFailure: 'sent: {{result.0.status}}' },
      ],
    },
    {
      match: 'list my missions',
      steps: [{ call: [{ tool: 'mission.list', input: { limit: 50 } }] }, { say: 'missions: {{result.0.output.missions}} {{results}}' }],
    },
    {
      regex: 'cancel (mission-[0-9a-f-]+)',
      steps: [
        { call: [{ tool: 'mission.cancel', input: { missionId: '{{match.1}}', reason: 'not needed' } }] },
        { say: 'cancel: {{result.0.status}} {{result.0.error.kind}} {{result.0.error.message}} {{result.0.output.result}}' },
      ],
    },
    { steps: [{ say: 'ok' }] },
  ],
};

let tc: TestConnection;
let h: MissionHarness;
let turns: TurnGateway;
let missions: MissionGateway;
const ids: { alice: string; bob: string; forged: string; lunch?: string } = { alice: '', bob: '', forged: '' };

const telegram = (sender: string, trustTier: ChannelFacts['trustTier'] = 'SemiTrusted'): ChannelFacts => ({
  name: 'telegram',
  platform: 'Telegram',
  trustTier,
  sessionId: `tg-${sender}-${randomUUID()}`,
  sender,
});
const cli: ChannelFacts = { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: `cli-${randomUUID()}`, sender: 'local-user' };

async function turn(facts: ChannelFacts, text: string): Promise<{ turnId: string; outcome: TurnOutcome }> {
  const message = { id: randomUUID(), sessionId: facts.sessionId, content: textContent(text), receivedAt: Date.now() };
  const t = await turns.start(facts, message, () => undefined);
  return { turnId: t.turnWorkflowId, outcome: await t.outcome };
}

/**
 * A cancel asked in `facts`'s chat and approved: the outcome of the approved rerun. The sender is not
 * the owner, so what they write is untrusted content and only the owner decides the call (issue 29).
 */
async function approvedCancel(facts: ChannelFacts, missionId: string): Promise<{ rerunId: string; outcome: TurnOutcome }> {
  const asked = await turn(facts, `cancel ${missionId}`);
  expect(asked.outcome).toMatchObject({ status: 'Escalated', pendingTool: 'mission.cancel' });
  const gateId = confirmationGateId(asked.turnId);
  await waitForGate(confirmationMissionId(asked.turnId));
  const sender = { identity: facts.sender, channel: facts.name, trustTier: facts.trustTier };
  if (facts.trustTier !== 'Trusted')
    await expect(missions.decideAs('approve', gateId, sender)).rejects.toThrow(/only an owner may decide it/);
  await missions.decideAs('approve', gateId, LOCAL_APPROVER);
  const rerunId = confirmationRerunTurnId(asked.turnId);
  await h.client!.workflow.getHandle(confirmationMissionId(asked.turnId)).result();
  return { rerunId, outcome: (await h.client!.workflow.getHandle(rerunId).result()) as TurnOutcome };
}

async function waitForGate(missionId: string): Promise<void> {
  const handle = h.client!.workflow.getHandle<typeof missionWorkflow>(missionId);
  for (let i = 0; i < 200; i++) {
    const s = await handle.query(missionStatusQuery).catch(() => undefined);
    if (s?.gate?.state === 'open') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no open gate on ${missionId}`);
}

const said = (o: TurnOutcome): string => (o.status === 'Completed' && 'finalMessage' in o ? o.finalMessage : JSON.stringify(o));

/** Polls visibility (eventually consistent) until it lists `workflowId`. */
async function listed(workflowId: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for await (const wf of h.client!.workflow.list({ query: `WorkflowId = '${workflowId}'` })) if (wf.workflowId === workflowId) return;
    if (Date.now() > until) throw new Error(`${workflowId} not listed within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function statusOf(missionId: string): Promise<string> {
  return (await h.client!.workflow.getHandle(missionId).describe()).status.name;
}

beforeAll(async () => {
  tc = await testConnection();
  const deliveries = new DeliveryRegistry();
  deliveries.register('test', { send: async (to, text) => void sent.push({ to, text }) });
  h = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    {
      script,
      codec: { connection: tc.client.connection },
      missionControl: true,
      confirmWith: 'own',
      deliveries,
      agent: {
        capabilities: ['llm.call', 'mission.list', 'mission.cancel', 'mission.create', 'fs.read', 'channel.send'],
        // As in production: a cancel is confirm-first (and, after a SemiTrusted message, gated by taint too);
        // the sender may approve their own request, so the ownership check is what stands between them.
        confirmFirst: ['mission.cancel'],
        tierPolicy: { semiTrusted: { 'mission.list': ['own'], 'mission.cancel': ['own'] } },
      },
    },
  );
  turns = new TurnGateway({ client: h.client!, taskQueue: h.taskQueue, attestor: h.attestor, hub: h.hub });
  missions = new MissionGateway({ client: h.client!, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: [], dashboard: true });
  const wait = [{ wait: '1h' }];
  ids.alice = (await missions.create({ goal: 'renew the passport', steps: wait, approvers: ['telegram:42'] })).missionId;
  ids.bob = (await missions.create({ goal: 'water the plants', steps: wait, approvers: ['telegram:77'] })).missionId;
  // Names Alice, but vouched for by a key that is not this install's: the worker refuses it, and it is nobody's.
  const forged = { ...missions.definition({ goal: 'forged', steps: wait, approvers: ['telegram:42'] }) };
  ids.forged = forged.missionId;
  await startMission(
    { client: h.client!, taskQueue: h.taskQueue, attestor: createAttestor(randomBytes(32)), dashboard: true },
    forged,
    'ALLOW_DUPLICATE',
  );
  for (const id of Object.values(ids)) await listed(id);
}, 120_000);

afterAll(async () => {
  for (const id of Object.values(ids).filter((i) => i !== undefined))
    await h?.client?.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await h?.stop();
});

describe('mission.list and mission.cancel in a conversation', () => {
  it('each allowlisted sender lists only the missions that name them; the owner on the CLI lists all', async () => {
    const alice = said((await turn(telegram('42'), 'list my missions')).outcome);
    expect(alice).toContain(ids.alice);
    expect(alice).toContain('renew the passport');
    expect(alice).not.toContain(ids.bob);
    expect(alice).not.toContain(ids.forged);
    const bob = said((await turn(telegram('77'), 'list my missions')).outcome);
    expect(bob).toContain(ids.bob);
    expect(bob).not.toContain(ids.alice);
    const owner = said((await turn(cli, 'list my missions')).outcome);
    expect(owner).toContain(ids.alice);
    expect(owner).toContain(ids.bob);
    expect(owner).not.toContain(ids.forged);
  }, 120_000);

  it("Bob cannot cancel Alice's mission: refused like a missing one, audited, and it is still running", async () => {
    // Bob asks, and approves his own request (he may: it is his chat's confirmation); the rerun is refused.
    const { rerunId, outcome } = await approvedCancel(telegram('77'), ids.alice);
    expect(said(outcome)).toContain(`cancel: Failed NotFound mission.cancel: no mission ${ids.alice} of yours`);
    const calls = (await h.audit(rerunId)).filter((e) => e.type === 'ToolCall');
    expect(calls).toMatchObject([{ toolId: 'mission.cancel', scopeUsed: 'mission.cancel:own', outcome: expect.stringMatching(/^Failed/) }]);
    expect(await statusOf(ids.alice)).toBe('RUNNING');
    const status = await h.client!.workflow.getHandle<typeof missionWorkflow>(ids.alice).query(missionStatusQuery);
    expect(status.state).not.toBe('cancelled');
    // Untrusted (a stranger writing to the bot): denied by scope, the tool never runs.
    const stranger = await turn(telegram('42', 'Untrusted'), `cancel ${ids.alice}`);
    expect(said(stranger.outcome)).toContain('cancel: Denied');
    expect(await statusOf(ids.alice)).toBe('RUNNING');
    expect((await h.verify()).ok).toBe(true);
  }, 120_000);

  it('Alice cancels her own mission: it ends cancelled; again, it says so', async () => {
    const first = await approvedCancel(telegram('42'), ids.alice);
    expect(said(first.outcome)).toContain('cancel: Completed');
    expect(said(first.outcome)).toMatch(/cancelled$/);
    const result = (await h.client!.workflow.getHandle(ids.alice).result()) as MissionResult;
    expect(result).toMatchObject({ missionId: ids.alice, state: 'cancelled' });
    // Bob's is untouched.
    expect(await statusOf(ids.bob)).toBe('RUNNING');
    const again = await approvedCancel(telegram('42'), ids.alice);
    expect(said(again.outcome)).toMatch(/cancel: Completed\s+already-cancelled$/);
  }, 120_000);
});

describe('a mission made after untrusted content, listed later', () => {
  it('its goal does not vouch for an address: messaging the one a mail put in it waits for a person', async () => {
    const created = await turn(cli, 'remind me in 1h about the lunch in this mail');
    const missionId = /created (mission-[0-9a-f]+)/.exec(said(created.outcome))?.[1];
    expect(missionId, said(created.outcome)).toBeDefined();
    ids.lunch = missionId!;
    await listed(missionId!);
    const asked = await turn(cli, 'check the mail, then message the lunch guest on test');
    expect(
      sent.filter((m) => m.to === 'mallory@evil.example'),
      JSON.stringify(asked.outcome),
    ).toEqual([]);
    expect(asked.outcome).toMatchObject({
      status: 'Escalated',
      pendingTool: 'channel.send',
      reason: expect.stringMatching(/channel\.send: "to" is not from your message or configuration after untrusted content/),
    });
    await h
      .client!.workflow.getHandle(confirmationMissionId(asked.turnId))
      .terminate('test over')
      .catch(() => undefined);
  }, 120_000);
});
