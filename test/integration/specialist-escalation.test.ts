/**
 * A specialist's confirm-first call (issue 33), on a worker that opens confirmations for chat turns:
 * the specialist stops and the lead is told which call waits; no confirmation mission is opened for
 * the specialist (its rerun would hold the agent's whole set, not the specialist's), and nothing runs.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseSpecialists } from '../../core/specialists.js';
import { confirmationMissionId } from '../../workflows/turn-ids.js';
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

it("a specialist's confirm-first call stops it, the lead is told, and no confirmation of its own is opened", async () => {
  const { turnId, outcome } = await h.turn('have it filed');
  expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(
    /Failed \(ToolEscalation: specialist writer stopped: its fs\.write call needs a person's approval \(fs\.write is confirm-first/,
  );
  const child = `${turnId}/tool-0-0/writer`;
  expect((await h.audit(child)).find((e) => e.type === 'ToolCall')).toMatchObject({ toolId: 'fs.write', outcome: 'RequiresEscalation' });
  await expect(h.client.workflow.getHandle(confirmationMissionId(child)).describe()).rejects.toThrow(/not found/i);
  expect(existsSync(note)).toBe(false);
});
