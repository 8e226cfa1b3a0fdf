/**
 * Mission step kinds on the time-skipping server (issue 12): a reminder 90 days out waits on a
 * durable timer and then notifies its owner (a CLI mission's notice lands in `aivyx inbox`); the
 * wait is visible as the mission's waiting reason; a cancel during a wait runs nothing after it; a
 * malformed wait is refused before any workflow starts (the gateway) or fails the workflow
 * non-retryably (a forged start), never a first task retried forever. A `waitFor` approval asks the
 * approvers like a gate: yes takes the event branch, no (or silence) the other.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_APPROVER, MissionGateway, signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import type { ChannelFacts } from '../../core/channel.js';
import { createInbox } from '../../infra/inbox.js';
import { SealedStorage } from '../../infra/storage/index.js';
import type { MissionStep } from '../../machines/index.js';
import {
  approveGateUpdate,
  cancelMissionSignal,
  denyGateUpdate,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { timeSkippingEnv } from '../support/temporal.js';

let env: TestWorkflowEnvironment;
let h: MissionHarness;

beforeAll(async () => {
  env = await timeSkippingEnv();
  h = await startMissionHarness(env, { script: { rules: [{ steps: [{ say: 'step done' }] }] } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await env?.teardown();
});

function definition(steps: MissionStep[]): MissionDefinition {
  const missionId = `mission-${randomUUID()}`;
  const channel: ChannelFacts = { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: 'local-user' };
  return {
    missionId,
    goal: 'remember',
    steps,
    approvers: [{ identity: 'local-user', channel: 'cli' }],
    onExpire: 'fail',
    capabilities: [],
    channel,
  };
}

const start = (def: MissionDefinition) =>
  env.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: h.taskQueue,
    args: [signedMissionArgs(h.attestor, def)],
  });

/** Polls the status query (in real time: the clock skips only while a result is awaited). */
async function waitingReason(missionId: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const s = await env.client.workflow.getHandle(missionId).query(missionStatusQuery);
    if (s.state === 'waiting' && s.waiting) return s.waiting;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${missionId} never waited`);
}

const inbox = () => createInbox(SealedStorage.open(h.db, h.master).domain('sessions'));
const steps = (evs: { type: string; outcome?: string }[]) => evs.filter((e) => e.type === 'MissionStepFinished').map((e) => e.outcome);

describe('mission step kinds', () => {
  it('a reminder 90 days out: a durable timer, then the notice in the owner’s inbox, audited', async () => {
    const now = await env.currentTimeMs();
    const until = new Date(now + 90 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const def = definition([
      { kind: 'wait', until, timeZone: 'UTC' },
      { kind: 'notify', text: 'renew the passport' },
    ]);
    const handle = await start(def);
    expect(await waitingReason(def.missionId)).toBe(`a timer until ${new Date(until).toISOString()} (wait until ${until} (UTC))`);
    expect((await inbox().list()).some((r) => r.turnId.startsWith(def.missionId))).toBe(false);

    expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 2 });
    expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(Date.parse(until));
    const held = (await inbox().list()).filter((r) => r.turnId === `${def.missionId}/step-1/notice`);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ channel: 'cli', reason: `a notice from mission ${def.missionId}` });
    expect(held[0]!.outcome).toMatchObject({ status: 'Completed', finalMessage: 'renew the passport' });
    const audit = await h.audit(def.missionId);
    expect(steps(audit)).toEqual(['Waited', 'Notified']);
    expect(audit.at(-1)).toMatchObject({ type: 'MissionEnded', state: 'completed' });
    // The notice's text is the person's: it is in the inbox, never in the audit log.
    expect(JSON.stringify(audit)).not.toContain('renew the passport');
  }, 120_000);

  it('a cancel during a wait ends the mission; the turn and the notice after it never run', async () => {
    const def = definition([{ kind: 'wait', for: '3d' }, { text: 'do the thing' }, { kind: 'notify', text: 'done' }]);
    const handle = await start(def);
    expect(await waitingReason(def.missionId)).toMatch(/^a timer until .* \(wait 3d\)$/);
    await handle.signal(cancelMissionSignal, { reason: 'not needed' });
    expect(await handle.result()).toMatchObject({ state: 'cancelled', stepsRun: 0 });
    expect(steps(await h.audit(def.missionId))).toEqual([]);
    expect(await h.audit(`${def.missionId}/step-1/run-1`)).toEqual([]);
    expect((await inbox().list()).some((r) => r.turnId.startsWith(def.missionId))).toBe(false);
  }, 120_000);

  it('a bad wait is refused before any workflow starts; a forged one fails the workflow once, not forever', async () => {
    const gateway = new MissionGateway({ client: env.client, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: [] });
    const refused = (steps: unknown[]) => {
      try {
        gateway.definition({ goal: 'g', steps } as never);
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(refused([{ wait: 'soon' }])).toMatch(/"steps\.0\.wait": must be a duration such as 90s, 24h or 3d/);
    expect(refused([{ waitUntil: '2027-03-01T09:00' }])).toMatch(/"steps\.0\.timeZone": is needed with a local time/);
    expect(refused([{ waitUntil: '2027-03-01T09:00', timeZone: 'Mars/Base' }])).toMatch(/unknown time zone "Mars\/Base"/);
    expect(refused([{ waitUntil: 'next friday', timeZone: 'UTC' }])).toMatch(/must be a local time such as 2027-03-01T09:00/);
    expect(refused([{ notify: '' }])).not.toBe('accepted');
    const email = (e: object, more: object = {}) => [{ waitFor: { email: e }, within: '5d', ...more }];
    expect(refused(email({ from: 'bob' }))).toMatch(/"steps\.0\.waitFor\.email\.from": must be an e-mail address/);
    expect(refused(email({ from: 'bob@example.com', thread: 'no id' }))).toMatch(/must be a Message-ID/);
    expect(refused(email({ from: 'bob@example.com' }, { within: 'a while' }))).toMatch(/"steps\.0\.within": must be a duration/);
    expect(refused(email({ from: 'bob@example.com' }, { onTimeout: 'retry' }))).toMatch(/steps\.0\.onTimeout/);
    expect(refused([{ notify: 'hi', to: ['bob'] }])).toMatch(/"steps\.0\.to\.0": must be "<channel>:<address>"/);
    expect(gateway.definition({ goal: 'g', steps: [{ notify: 'hi', to: ['email:bob@example.com'] }] }).steps).toEqual([
      { kind: 'notify', text: 'hi', to: [{ channel: 'email', to: 'bob@example.com' }] },
    ]);
    expect(refused([{ waitFor: { telegram: {} }, within: '1d' }])).toMatch(/needs "from" or "contains"/);
    expect(refused([{ waitFor: { telegram: { from: 'bob' } }, within: '1d' }])).toMatch(/a Telegram user id \(digits\) or an @username/);
    expect(
      gateway.definition({ goal: 'g', steps: email({ from: 'Bob@Example.com', thread: '<t.1@x.test>' }, { onEvent: 'end' }) as never })
        .steps,
    ).toEqual([
      { kind: 'waitFor', event: { source: 'email', from: 'bob@example.com', thread: 't.1@x.test' }, within: '5d', onEvent: 'end' },
    ]);
    expect(gateway.definition({ goal: 'g', steps: [{ waitUntil: '2027-03-01T09:00', timeZone: 'Europe/Berlin' }] }).steps).toEqual([
      { kind: 'wait', until: '2027-03-01T09:00:00+01:00', timeZone: 'Europe/Berlin' },
    ]);

    // Past the gateway (a start straight at the frontend, even with a genuine proof): one non-retryable failure.
    const def = definition([{ kind: 'wait', for: 'soon' }]);
    const handle = await start(def);
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/step 1: invalid duration "soon"/);
    const forged = definition([{ kind: 'waitFor', event: { source: 'telegram' }, within: '1d' }]);
    const err2 = await (await start(forged)).result().catch((e: unknown) => e);
    expect(String((err2 as WorkflowFailedError).cause?.message)).toMatch(/step 1: a Telegram wait needs "from" or "contains"/);
  }, 120_000);
  it('a waitFor approval asks the approvers like a gate: a yes goes on, a no ends the mission, silence counts as no', async () => {
    const ask = (): MissionStep[] => [
      { kind: 'waitFor', event: { source: 'approval', question: 'Send the nudge to Bob?' }, within: '2d', onTimeout: 'end' },
      { kind: 'notify', text: 'nudge sent' },
    ];
    const gateOf = async (missionId: string) => {
      for (let i = 0; i < 400; i++) {
        const st = await env.client.workflow.getHandle(missionId).query(missionStatusQuery);
        if (st.gate?.state === 'open') return st;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${missionId} never asked`);
    };
    const yes = definition(ask());
    const handle = await start(yes);
    const asked = await gateOf(yes.missionId);
    expect(asked).toMatchObject({ state: 'waiting', waiting: 'a yes to "Send the nudge to Bob?" from an approver' });
    expect(asked.gate).toMatchObject({ tool: 'mission.ask', call: ['question: "Send the nudge to Bob?"'] });
    await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(h.attestor, 'approve', asked.gate!.gateId, LOCAL_APPROVER)] });
    expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 2 });
    expect(steps(await h.audit(yes.missionId))).toEqual(['EventArrived', 'Notified']);

    const no = definition(ask());
    const h2 = await start(no);
    const asked2 = await gateOf(no.missionId);
    await h2.executeUpdate(denyGateUpdate, { args: [signedDecision(h.attestor, 'deny', asked2.gate!.gateId, LOCAL_APPROVER)] });
    expect(await h2.result()).toMatchObject({ state: 'completed', stepsRun: 1 });
    expect(steps(await h.audit(no.missionId))).toEqual(['TimedOut']);

    // Nobody answers for 2 (skipped) days: the same as a no.
    const silent = definition(ask());
    expect(await (await start(silent)).result()).toMatchObject({ state: 'completed', stepsRun: 1 });
    expect(steps(await h.audit(silent.missionId))).toEqual(['TimedOut']);
  });
  it('a notice to other people goes to each on their channel, once — only where the mission may send (channel.send:<channel>)', async () => {
    const sent: Array<{ to: string; text: string; key: string }> = [];
    const off = h.deliveries.register('tg', { send: async (to, text, key) => void sent.push({ to, text, key }) });
    try {
      const notice: MissionStep = {
        kind: 'notify',
        text: 'the rent is due',
        to: [
          { channel: 'tg', to: '42' },
          { channel: 'tg', to: '43' },
        ],
      };
      const allowed = { ...definition([notice]), capabilities: ['channel.send:tg'] };
      expect(await (await start(allowed)).result()).toMatchObject({ state: 'completed', stepsRun: 1 });
      expect(sent.map((m) => [m.to, m.text])).toEqual([
        ['42', 'the rent is due'],
        ['43', 'the rent is due'],
      ]);
      expect(new Set(sent.map((m) => m.key)).size).toBe(2);

      // The same notice in a mission that holds no channel.send: the step fails, nobody is messaged.
      sent.length = 0;
      const refused = definition([notice, { kind: 'notify', text: 'never' }]);
      const end = await (await start(refused)).result();
      expect(end).toMatchObject({ state: 'failed', stepsRun: 1 });
      expect(end.reason).toMatch(/may not send on tg/);
      expect(sent).toEqual([]);
      expect(steps(await h.audit(refused.missionId))).toEqual(['Failed']);
    } finally {
      off();
    }
  });
});
