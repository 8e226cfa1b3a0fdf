/**
 * A specialist's confirm-first call (issue 33), on a worker that opens confirmations for chat turns:
 * the specialist stops and the lead is told which call waits; the request reaches the owner through
 * the lead's channel and the same approval flow; once approved, exactly that call runs once, in a
 * rerun that holds no more than the specialist did and continues from where it stopped.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseSpecialists } from '../../core/specialists.js';
import { awaitTurnOutcome } from '../../channels/turn-client.js';
import { missionStatusQuery, type missionWorkflow } from '../../workflows/mission/mission-workflow.js';
import { confirmationGateId, confirmationMissionId, confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const notes = mkdtempSync(join(tmpdir(), 'aivyx-specialist-gate-'));
const note = join(notes, 'filed.md');

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    missions: true,
    script: {
      rules: [
        {
          match: 'have it filed',
          steps: [{ call: [{ tool: 'agent.delegate', input: { specialist: 'writer', task: 'file the note' } }] }, { say: '{{results}}' }],
        },
        { match: 'file the note', steps: [{ call: [{ tool: 'fs.write', input: { path: note, content: 'filed' } }] }, { say: 'filed' }] },
      ],
    },
    agent: {
      capabilities: ['fs.write', 'llm.call', 'agent.delegate'],
      confirmFirst: ['fs.write'],
      specialists: parseSpecialists([{ name: 'writer', instructions: 'File notes.', capabilities: [`fs.write:${notes}/**`, 'llm.call'] }]),
    },
  });
}, 120_000);
afterAll(async () => h?.stop());

it("a specialist's confirm-first call is approved once through the lead's channel and runs once, attenuated", async () => {
  const { turnId, outcome } = await h.turn('have it filed');
  expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(
    /Failed \(ToolEscalation: specialist writer stopped: its fs\.write call needs a person's approval \(fs\.write is confirm-first.*the request went to the owner/,
  );
  const child = `${turnId}/tool-0-0/writer`;
  expect((await h.audit(child)).find((e) => e.type === 'ToolCall')).toMatchObject({ toolId: 'fs.write', outcome: 'RequiresEscalation' });
  expect(existsSync(note)).toBe(false);

  // The gate is for exactly the specialist's call; its approvers are the lead's asker and the owner.
  const missionId = confirmationMissionId(child);
  const gateId = confirmationGateId(child);
  const owner = { identity: 'tester', channel: 'test', trustTier: 'Trusted' } as const;
  await waitForGate(missionId);
  expect(await h.missions!.decideAs('approve', gateId, owner)).toEqual({ gateId, state: 'approved' });
  await h.client.workflow.getHandle(missionId).result();
  await expect(h.missions!.decideAs('approve', gateId, owner)).rejects.toThrow();

  const rerun = confirmationRerunTurnId(child);
  expect(await awaitTurnOutcome(h.client, rerun)).toMatchObject({ status: 'Completed', finalMessage: 'filed' });
  expect(readFileSync(note, 'utf8')).toBe('filed');
  const audit = await h.audit(rerun);
  // No more than the specialist held, and the approved call ran once.
  expect(audit.find((e) => e.type === 'TurnStarted')).toMatchObject({ effectiveCapabilities: [`fs.write:${notes}/**`, 'llm.call'] });
  expect(audit.filter((e) => e.type === 'ToolCall')).toEqual([
    expect.objectContaining({ toolId: 'fs.write', outcome: expect.stringMatching(/^Completed/) }),
  ]);
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
