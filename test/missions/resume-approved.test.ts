/**
 * "A chore approved is a chore finished": a chore that needs several confirm-first calls asks once
 * per call, and each approval continues the turn from that call with its real result (the worker's
 * resume record), never from a fresh plan that asks again for what was approved. Each call runs
 * once, the chore completes. A resume the worker did not attest, a record of another turn or one
 * used twice runs nothing, and is audited. On the shared dev server.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissionGateway, signedMissionArgs } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { inputHash } from '../../core/canonical-json.js';
import type { ChannelFacts, OneShotGrant, TurnRequest } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { confirmationMissionId } from '../../workflows/turn-ids.js';
import { missionStatusQuery, type MissionDefinition, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-resume-'));
const write = (name: string) => ({ tool: 'fs.write', input: { path: join(dir, name), content: name } });

/** What the dying activities look at: a turn request (openTurn), or a call's runTool input. */
interface DyingInput {
  turnId: string;
  resumeFrom?: string;
  message?: unknown;
  call?: unknown;
}
/** The activities that died (once each) after doing their work, before reporting it. */
const died = new Set<string>();
/** Wraps an activity so that its first run matching `which` does its work and then dies, as a crashed worker would. */
const dieOnceAfter =
  (name: string, which: (input: DyingInput) => boolean) =>
  (real: (...args: never[]) => Promise<unknown>) =>
  async (...args: unknown[]): Promise<unknown> => {
    const out = await real(...(args as never[]));
    if (which(args[0] as DyingInput) && !died.has(name)) {
      died.add(name);
      throw new Error('the worker died before it reported (a simulated crash)');
    }
    return out;
  };

/** A chore of `names.length` confirm-first writes, one per model step, then a reply naming the last result. */
const chore = (match: string, names: string[]) => ({
  match,
  steps: [...names.map((n) => ({ call: [write(n)] })), { say: `${match} done: {{results}}` }],
});
const script = {
  rules: [
    chore('two chores', ['two-a', 'two-b']),
    chore('three chores', ['three-a', 'three-b', 'three-c']),
    chore('attacked chores', ['att-a', 'att-b']),
    chore('mission chores', ['mis-a', 'mis-b']),
    chore('crash chores', ['crash-a', 'crash-b']),
    // A deferred tool loaded before the gated call: the rerun that continues the chore keeps it loaded.
    {
      match: 'loaded chores',
      steps: [
        { call: [{ tool: 'tools.load', input: { tools: ['value.read'] } }] },
        { call: [write('load-a')] },
        { say: 'loaded chores done: {{results}}' },
      ],
    },
    // Both writes proposed in one step.
    { match: 'paired chores', steps: [{ call: [write('pair-a'), write('pair-b')] }, { say: 'paired chores done: {{results}}' }] },
    { steps: [{ say: 'ok' }] },
  ],
};

let tc: TestConnection;
let h: MissionHarness;
let turns: TurnGateway;
let missions: MissionGateway;

beforeAll(async () => {
  tc = await testConnection();
  h = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    {
      script,
      confirmWith: tc.client,
      agent: { confirmFirst: ['shell.exec', 'fs.write'] },
      // In the crash chore, the resumed turn's open and its approved call each die once after doing their work.
      interpose: {
        openTurn: dieOnceAfter('openTurn', (req) => req.resumeFrom !== undefined && JSON.stringify(req.message).includes('crash chores')),
        runTool: dieOnceAfter('runTool', (run) => run.turnId.endsWith('/step-0/run-2') && JSON.stringify(run.call).includes('crash-a')),
      },
    },
  );
  turns = new TurnGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, hub: h.hub });
  missions = new MissionGateway({ client: tc.client, taskQueue: h.taskQueue, attestor: h.attestor, capabilities: [] });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const owner = (): ChannelFacts => ({
  name: 'rest',
  platform: 'Rest',
  trustTier: 'Trusted',
  sessionId: `rest-${randomUUID()}`,
  sender: 'owner',
});

/** The gate open on `missionId` once it is `gateId` (the one before it may still be closing). */
async function gateOpen(missionId: string, gateId: string): Promise<void> {
  const handle = tc.client.workflow.getHandle<typeof missionWorkflow>(missionId);
  for (let i = 0; i < 600; i++) {
    try {
      const s = await handle.query(missionStatusQuery);
      if (s.gate?.state === 'open' && s.gate.gateId === gateId) return;
    } catch {
      // not started yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gate ${gateId} never opened`);
}

/** Every `ToolCall` entry of the mission's turns (the turn that asked, then each rerun), in order. */
async function toolCalls(askedBy: string, missionId: string, reruns: number): Promise<Extract<AuditEvent, { type: 'ToolCall' }>[]> {
  const ids = [askedBy, ...Array.from({ length: reruns }, (_, i) => `${missionId}/step-0/run-${i + 2}`)];
  const all = (await Promise.all(ids.map((id) => h.audit(id)))).flat();
  return all.filter((e): e is Extract<AuditEvent, { type: 'ToolCall' }> => e.type === 'ToolCall');
}

/** Asks for a chore of `names` writes, approving each call once as the owner; returns the turn that asked and its mission. */
async function runChore(text: string, names: string[], afterFirstApproval?: () => Promise<void>) {
  const facts = owner();
  const message = { id: randomUUID(), sessionId: facts.sessionId, content: textContent(text), receivedAt: Date.now() };
  const turn = await turns.start(facts, message, () => undefined);
  expect(await turn.outcome).toMatchObject({ status: 'Escalated', pendingTool: 'fs.write' });
  const missionId = confirmationMissionId(turn.turnWorkflowId);
  for (let g = 1; g <= names.length; g++) {
    const gateId = `${missionId}/gate-${g}`;
    await gateOpen(missionId, gateId);
    // Nothing past the approved calls has run yet.
    for (const [i, n] of names.entries()) expect(existsSync(join(dir, n))).toBe(i < g - 1);
    await missions.decideAs('approve', gateId, { identity: 'owner', channel: 'rest', trustTier: 'Trusted' });
    if (g === 1) await afterFirstApproval?.();
  }
  const result = await tc.client.workflow.getHandle<typeof missionWorkflow>(missionId).result();
  return { asked: turn.turnWorkflowId, missionId, result };
}

/** What the calls of a chore did: for each write, its entries' outcomes in order. */
function outcomesByCall(calls: Extract<AuditEvent, { type: 'ToolCall' }>[], names: string[]): string[][] {
  return names.map((n) => calls.filter((c) => c.inputHash === inputHash(write(n).input)).map((c) => c.outcome));
}

describe('a chore approved is a chore finished', () => {
  it('two confirm-first calls: asked once each, each runs once, the chore completes (across a worker restart)', async () => {
    const names = ['two-a', 'two-b'];
    const { asked, missionId, result } = await runChore('two chores', names, () => h.restartWorker());
    expect(result).toMatchObject({ state: 'completed', stepsRun: 2 });
    for (const n of names) expect(existsSync(join(dir, n))).toBe(true);

    const calls = await toolCalls(asked, missionId, 2);
    // Each call: asked once (RequiresEscalation), then run once, never asked again.
    expect(outcomesByCall(calls, names)).toEqual([
      ['RequiresEscalation', 'Completed(Verified)'],
      ['RequiresEscalation', 'Completed(Verified)'],
    ]);
    expect(calls).toHaveLength(4);
    const audit = await h.audit(missionId);
    expect(audit.filter((e) => e.type === 'GateOpened').map((e) => e.type === 'GateOpened' && e.inputHash)).toEqual(
      names.map((n) => inputHash(write(n).input)),
    );
    // The last rerun continued the chore: its model saw the approved call's real result and finished.
    const last = await tc.client.workflow.getHandle(`${missionId}/step-0/run-3`).result();
    expect(last).toMatchObject({ status: 'Completed', toolCallsMade: 1, finalMessage: expect.stringContaining('fs.write: Completed') });
    expect((await h.verify()).ok).toBe(true);
  }, 180_000);

  it('a worker that dies after opening the resumed turn, and again after running the approved call: nothing runs twice', async () => {
    const names = ['crash-a', 'crash-b'];
    const { asked, missionId, result } = await runChore('crash chores', names);
    expect(result).toMatchObject({ state: 'completed', stepsRun: 2 });
    expect([...died].sort()).toEqual(['openTurn', 'runTool']);
    const calls = await toolCalls(asked, missionId, 2);
    expect(outcomesByCall(calls, names)).toEqual(names.map(() => ['RequiresEscalation', 'Completed(Verified)']));
    expect(calls).toHaveLength(4);
    // The retried open found its own claim on the record: the rerun was not refused.
    expect((await h.audit(`${missionId}/step-0/run-2`)).map((e) => e.type)).not.toContain('TurnRejected');
  }, 180_000);

  it('a chore that loaded a deferred tool before its gated call: the rerun continues with it loaded', async () => {
    const { missionId, result } = await runChore('loaded chores', ['load-a']);
    expect(result).toMatchObject({ state: 'completed', stepsRun: 1 });
    const rerun = await tc.client.workflow.getHandle(`${missionId}/step-0/run-2`).result();
    expect(rerun).toMatchObject({ status: 'Completed', toolCallsMade: 1, loadedTools: ['value.read'] });
  }, 180_000);

  it('two gated calls proposed in one step: each gets its own gate, the second asked next without a new plan', async () => {
    const names = ['pair-a', 'pair-b'];
    const { asked, missionId, result } = await runChore('paired chores', names);
    expect(result).toMatchObject({ state: 'completed', stepsRun: 2 });
    const calls = await toolCalls(asked, missionId, 2);
    // pair-b asked with pair-a, asked again beside pair-a's run (its gate opens then), then ran once.
    expect(outcomesByCall(calls, names)).toEqual([
      ['RequiresEscalation', 'Completed(Verified)'],
      ['RequiresEscalation', 'RequiresEscalation', 'Completed(Verified)'],
    ]);
    const audit = await h.audit(missionId);
    expect(audit.filter((e) => e.type === 'GateOpened')).toHaveLength(2);
    const last = await tc.client.workflow.getHandle(`${missionId}/step-0/run-3`).result();
    expect(last).toMatchObject({ status: 'Completed', finalMessage: expect.stringMatching(/fs\.write: Completed.*fs\.write: Completed/) });
  }, 180_000);

  it('three confirm-first calls complete with three approvals, each call run once', async () => {
    const names = ['three-a', 'three-b', 'three-c'];
    const { asked, missionId, result } = await runChore('three chores', names);
    expect(result).toMatchObject({ state: 'completed', stepsRun: 3 });
    const calls = await toolCalls(asked, missionId, 3);
    expect(outcomesByCall(calls, names)).toEqual(names.map(() => ['RequiresEscalation', 'Completed(Verified)']));
    expect(calls).toHaveLength(6);
    const audit = await h.audit(missionId);
    expect(audit.filter((e) => e.type === 'GateOpened')).toHaveLength(3);
  }, 180_000);

  it("a mission's own step: each escalated run is continued by the next, and the step completes", async () => {
    const def: MissionDefinition = {
      missionId: `mission-${randomUUID()}`,
      goal: 'chores',
      steps: [{ text: 'mission chores' }],
      approvers: [{ identity: 'owner', channel: 'rest' }],
      onExpire: 'fail',
      capabilities: ['fs.write'],
      channel: owner(),
    };
    const handle = await tc.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: def.missionId,
      taskQueue: h.taskQueue,
      args: [signedMissionArgs(h.attestor, def)],
    });
    for (const g of [1, 2]) {
      await gateOpen(def.missionId, `${def.missionId}/gate-${g}`);
      await missions.decideAs('approve', `${def.missionId}/gate-${g}`, { identity: 'owner', channel: 'rest', trustTier: 'Trusted' });
    }
    expect(await handle.result()).toMatchObject({ state: 'completed', stepsRun: 3 });
    const calls = await toolCalls(`${def.missionId}/step-0/run-1`, def.missionId, 2);
    expect(outcomesByCall(calls, ['mis-a', 'mis-b'])).toEqual([
      ['RequiresEscalation', 'Completed(Verified)'],
      ['RequiresEscalation', 'Completed(Verified)'],
    ]);
  }, 180_000);
});

/** How a turn workflow ended: its failure's type and message. */
async function failure(turnId: string): Promise<{ type?: string; message: string }> {
  try {
    await tc.client.workflow.getHandle(turnId).result();
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      const cause = err.cause as { type?: string; message: string } | undefined;
      return { ...(cause?.type ? { type: cause.type } : {}), message: cause?.message ?? err.message };
    }
    throw err;
  }
  throw new Error(`turn ${turnId} did not fail`);
}

/** A rerun request of mission `missionId`, as the worker would build one (the caller attests it, or not). */
function rerun(missionId: string, run: number, grant: OneShotGrant, resumeFrom: string): TurnRequest {
  const turnId = `${missionId}/step-0/run-${run}`;
  return {
    turnId,
    message: { id: turnId, sessionId: 'attack', content: textContent('attacked chores'), receivedAt: Date.now() },
    channel: owner(),
    oneShotGrant: grant,
    resumeFrom,
  };
}

/** Starts `req` at the frontend and returns why it was refused; asserts that it ran nothing and that the refusal is audited. */
async function refused(req: TurnRequest): Promise<string> {
  await tc.client.workflow.start('turnWorkflow', { workflowId: req.turnId, taskQueue: h.taskQueue, args: [req] });
  const failed = await failure(req.turnId);
  expect(failed.type).toBe('CapabilityDenied');
  const audit = await h.audit(req.turnId);
  expect(audit.filter((e) => e.type === 'ToolCall' || e.type === 'TurnStarted')).toEqual([]);
  const rejected = audit.find((e) => e.type === 'TurnRejected');
  expect(rejected).toBeDefined();
  return rejected?.type === 'TurnRejected' ? rejected.reason : '';
}

describe('a resume only the worker gives, once', () => {
  let chore1: { asked: string; missionId: string };
  const grantOf = (missionId: string, n: string): OneShotGrant => ({
    missionId,
    gateId: `${missionId}/gate-1`,
    tool: 'fs.write',
    inputHash: inputHash(write(n).input),
  });

  beforeAll(async () => {
    chore1 = await runChore('attacked chores', ['att-a', 'att-b']);
  }, 180_000);

  it('a resumeFrom added at the frontend to an attested request is refused', async () => {
    const { asked, missionId } = chore1;
    const { resumeFrom: _, ...plain } = rerun(missionId, 7, grantOf(missionId, 'att-a'), asked);
    const forged = { ...h.attestor.attest(plain), resumeFrom: asked };
    expect(await refused(forged)).toMatch(/attestation|proof|mac/i);
  }, 60_000);

  it('a record of another mission’s turn is refused, even attested', async () => {
    const other = `mission-other-${randomUUID()}`;
    const req = h.attestor.attest(rerun(other, 2, grantOf(other, 'att-a'), chore1.asked));
    expect(await refused(req)).toMatch(/is not mission mission-other-.*'s/);
  }, 60_000);

  it('a record for another call than the grant is refused, even attested', async () => {
    const { asked, missionId } = chore1;
    const req = h.attestor.attest(rerun(missionId, 8, grantOf(missionId, 'att-b'), asked));
    expect(await refused(req)).toMatch(/for another call than gate/);
  }, 60_000);

  it('a record used twice is refused: the second resume runs nothing', async () => {
    const { asked, missionId } = chore1;
    const req = h.attestor.attest(rerun(missionId, 9, grantOf(missionId, 'att-a'), asked));
    expect(await refused(req)).toMatch(/was already resumed, by run .* of .*step-0\/run-2/);
  }, 60_000);
});
