/**
 * A specialist's confirm-first call (issue 33), on a worker that opens confirmations for chat turns:
 * the specialist stops and the lead is told which call waits; the request reaches the owner through
 * the lead's channel and the same approval flow; once approved, exactly that call runs once, in a
 * rerun that runs *as the specialist* — its instructions, its own model, its budget slice — holds no
 * more than the specialist did, and continues from where it stopped. Who the rerun runs as comes
 * from the worker's sealed resume record: a rerun's input naming a specialist widens nothing.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { inputHash } from '../../core/canonical-json.js';
import type { TurnRequest } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { parseSpecialists } from '../../core/specialists.js';
import { awaitTurnOutcome } from '../../channels/turn-client.js';
import { missionStatusQuery, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { confirmationGateId, confirmationMissionId, confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const notes = mkdtempSync(join(tmpdir(), 'aivyx-specialist-gate-'));
const note = (name: string) => join(notes, name);
const delegate = (specialist: string, task: string) => ({
  steps: [{ call: [{ tool: 'agent.delegate', input: { specialist, task } }] }, { say: '{{results}}' }],
});
const write = (name: string) => ({ tool: 'fs.write', input: { path: note(name), content: 'filed' } });

// The worker's own model: the leads, and the specialists without a model of their own.
const scripted = createScriptedProvider({
  rules: [
    { match: 'have it filed', ...delegate('writer', 'file the note') },
    { match: 'file the note', steps: [{ call: [write('filed.md')] }, { say: 'filed' }] },
    { match: 'have it scribed', ...delegate('scribe', 'scribe the note') },
    { match: 'have it spent', ...delegate('spender', 'spend on the note') },
    {
      match: 'spend on the note',
      // Its first step fits its 10-token slice; the rerun's next step does not, and its call never runs.
      steps: [
        { call: [write('spent.md')], usage: { inputTokens: 1, outputTokens: 1 } },
        { call: [write('overspent.md')], usage: { inputTokens: 30, outputTokens: 30 } },
        { say: 'never said' },
      ],
    },
    { match: 'have it kept', ...delegate('writer', 'keep the note') },
    { match: 'keep the note', steps: [{ call: [write('kept.md')] }, { say: 'kept' }] },
  ],
});
// What each turn's model was told, and which model it asked (by turn id).
const systems = new Map<string, string>();
const asked = new Map<string, string>();
const watched = (name: string, inner: LlmProvider): LlmProvider => ({
  name: inner.name,
  step: (req, sink) => {
    systems.set(req.turnId, req.system ?? '');
    asked.set(req.turnId, name);
    return inner.step(req, sink);
  },
});
const scribeModel = createScriptedProvider({
  rules: [{ match: 'scribe the note', steps: [{ call: [write('scribed.md')] }, { say: 'scribed by the scribe model' }] }],
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    missions: true,
    llm: watched('worker', scripted),
    specialistLlms: new Map([['scribe', watched('scribe', scribeModel)]]),
    agent: {
      capabilities: ['fs.write', 'llm.call', 'agent.delegate'],
      confirmFirst: ['fs.write'],
      specialists: parseSpecialists([
        { name: 'writer', instructions: 'File notes.', capabilities: [`fs.write:${notes}/**`, 'llm.call'] },
        {
          name: 'scribe',
          instructions: 'Write as a scribe.',
          model: 'scripted:scribe.json',
          capabilities: [`fs.write:${notes}/**`, 'llm.call'],
        },
        { name: 'spender', instructions: 'Spend little.', capabilities: [`fs.write:${notes}/**`, 'llm.call'], budget: { tokens: 10 } },
        // Wider than the writer: what a forged rerun would claim.
        { name: 'wide', instructions: 'Anything.', capabilities: ['fs.write', 'llm.call'] },
      ]),
    },
  });
}, 120_000);
afterAll(async () => h?.stop());

const owner = { identity: 'tester', channel: 'test', trustTier: 'Trusted' } as const;

/** Runs `text` as a lead whose specialist escalates; returns the child's turn id once its gate is open. */
async function escalated(text: string, specialist: string): Promise<{ lead: string; child: string }> {
  const { turnId, outcome } = await h.turn(text);
  expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(
    new RegExp(
      `Failed \\(ToolEscalation: specialist ${specialist} stopped: its fs\\.write call needs a person's approval.*the request went to the owner`,
    ),
  );
  const child = `${turnId}/tool-0-0/${specialist}`;
  await waitForGate(confirmationMissionId(child));
  return { lead: turnId, child };
}

/** Approves the child's gate as the owner, waits for its mission, and returns the rerun's turn id. */
async function approve(child: string): Promise<string> {
  const gateId = confirmationGateId(child);
  expect(await h.missions!.decideAs('approve', gateId, owner)).toEqual({ gateId, state: 'approved' });
  await h.client.workflow
    .getHandle(confirmationMissionId(child))
    .result()
    .catch(() => undefined);
  await expect(h.missions!.decideAs('approve', gateId, owner)).rejects.toThrow();
  return confirmationRerunTurnId(child);
}

/** The rerun's tool calls: exactly the approved write, run once. */
async function ranOnce(rerun: string): Promise<void> {
  expect((await h.audit(rerun)).filter((e) => e.type === 'ToolCall')).toEqual([
    expect.objectContaining({ toolId: 'fs.write', outcome: expect.stringMatching(/^Completed/) }),
  ]);
}

it("a specialist's confirm-first call is approved once through the lead's channel and reruns once, as the specialist", async () => {
  const { lead, child } = await escalated('have it filed', 'writer');
  expect((await h.audit(child)).find((e) => e.type === 'ToolCall')).toMatchObject({ toolId: 'fs.write', outcome: 'RequiresEscalation' });
  expect(existsSync(note('filed.md'))).toBe(false);

  const rerun = await approve(child);
  expect(await awaitTurnOutcome(h.client, rerun)).toMatchObject({ status: 'Completed', finalMessage: 'filed' });
  expect(readFileSync(note('filed.md'), 'utf8')).toBe('filed');
  // No more than the specialist held, under its name and its lead, told what the specialist is told.
  expect((await h.audit(rerun)).find((e) => e.type === 'TurnStarted')).toMatchObject({
    effectiveCapabilities: [`fs.write:${notes}/**`, 'llm.call'],
    specialist: 'writer',
    parentTurnId: lead,
  });
  expect(systems.get(rerun)).toContain('You are the specialist "writer"');
  expect(systems.get(rerun)).toContain('File notes.');
  await ranOnce(rerun);
});

it('the rerun of a specialist with a model of its own asks that model', async () => {
  const { child } = await escalated('have it scribed', 'scribe');
  const rerun = await approve(child);
  expect(await awaitTurnOutcome(h.client, rerun)).toMatchObject({ status: 'Completed', finalMessage: 'scribed by the scribe model' });
  expect(asked.get(rerun)).toBe('scribe');
  expect(systems.get(rerun)).toContain('Write as a scribe.');
  await ranOnce(rerun);
});

it("the rerun is held to the specialist's budget slice: over it, it ends TimedOut(budget) after the approved call", async () => {
  const { child } = await escalated('have it spent', 'spender');
  const rerun = await approve(child);
  expect(await awaitTurnOutcome(h.client, rerun)).toMatchObject({ status: 'TimedOut', budget: expect.anything() });
  expect((await h.audit(rerun)).find((e) => e.type === 'TurnEnded')).toMatchObject({ outcome: 'TimedOut(budget:turn)' });
  expect(readFileSync(note('spent.md'), 'utf8')).toBe('filed');
  expect(existsSync(note('overspent.md'))).toBe(false);
  await ranOnce(rerun);
});

it('a rerun whose input names a wider specialist is refused and audited; the approved call still runs once, as the real one', async () => {
  const { lead, child } = await escalated('have it kept', 'writer');
  const missionId = confirmationMissionId(child);
  const forged = (n: number): TurnRequest => {
    const turnId = `${missionId}/step-0/run-${n}`;
    const channel = { ...h.facts('Trusted'), sessionId: turnId };
    const { input } = write('kept.md');
    return {
      turnId,
      message: { id: turnId, sessionId: turnId, content: textContent('keep the note'), receivedAt: Date.now() },
      channel,
      capabilityLimit: ['fs.write', 'llm.call'],
      oneShotGrant: { missionId, gateId: confirmationGateId(child), tool: 'fs.write', inputHash: inputHash(input) },
      resumeFrom: child,
      delegatedBy: { parentTurnId: lead, specialist: 'wide' },
    };
  };
  const rejection = async (id: string) => (await h.audit(id)).find((e) => e.type === 'TurnRejected');
  // Not attested: the MAC refuses it.
  const unattested = forged(7);
  expect(await h.rawTurn(unattested)).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });
  expect(await rejection(unattested.turnId)).toBeDefined();
  // Even with the worker's MAC, a specialist named by the input is a delegation, and this is none.
  const attested = h.attestor.attest(forged(8));
  expect(await h.rawTurn(attested)).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });
  expect(await rejection(attested.turnId)).toMatchObject({ reason: expect.stringContaining("must be derived from its lead's call") });
  expect(existsSync(note('kept.md'))).toBe(false);

  // The record was not used up: the real approval reruns the call once, as the writer.
  const rerun = await approve(child);
  expect(await awaitTurnOutcome(h.client, rerun)).toMatchObject({ status: 'Completed', finalMessage: 'kept' });
  expect((await h.audit(rerun)).find((e) => e.type === 'TurnStarted')).toMatchObject({
    effectiveCapabilities: [`fs.write:${notes}/**`, 'llm.call'],
    specialist: 'writer',
  });
  await ranOnce(rerun);
});

/** Polls until the confirmation mission's gate is open (the child's finalize starts it). */
async function waitForGate(missionId: string): Promise<void> {
  for (;;) {
    const status = await h.client.workflow
      .getHandle<typeof missionWorkflow>(missionId)
      .query(missionStatusQuery)
      .catch(() => undefined);
    if (status?.gate?.state === 'open') return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
