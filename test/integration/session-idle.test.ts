/**
 * Sessions end when idle: after their idle time (AIVYX_SESSION_IDLE_MS, a day by default, 2 s here) no
 * session workflow stays Running, and the next message re-opens the session with its history.
 */
import { afterAll, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

let h: Harness | undefined;
afterAll(async () => h?.stop());

it('20 one-shot conversations close after their idle time; the next message in one still sees its history', async () => {
  const scripted = createScriptedProvider({ rules: [{ steps: [{ say: 'noted: {{message}}' }] }] });
  /** How many earlier exchanges the model was shown, per step. */
  const historySeen: number[] = [];
  const llm: LlmProvider = {
    name: scripted.name,
    step: (req, sink) => {
      historySeen.push(req.history.length);
      return scripted.step(req, sink);
    },
  };
  h = await startHarness({ llm, sessionIdleMs: 2000 });
  const sessions = Array.from({ length: 20 }, (_, i) => `idle-${i}`);
  for (const sessionId of sessions) expect((await h.turn(`hello ${sessionId}`, { sessionId })).outcome.status).toBe('Completed');

  const status = async (sessionId: string): Promise<string> =>
    (await h!.client.workflow.getHandle(sessionWorkflowId('test', sessionId)).describe()).status.name;
  // Each closes by itself once idle; none needs a message or a cancel.
  const deadline = Date.now() + 60_000;
  let running = sessions.length;
  while (running > 0 && Date.now() < deadline) {
    running = (await Promise.all(sessions.map(status))).filter((s) => s === 'RUNNING').length;
    if (running > 0) await new Promise((r) => setTimeout(r, 500));
  }
  expect(running).toBe(0);
  expect(new Set(await Promise.all(sessions.map(status)))).toEqual(new Set(['COMPLETED']));

  // The next message re-opens the session, and the model is shown what was said before it closed.
  historySeen.length = 0;
  expect((await h.turn('and again', { sessionId: 'idle-0' })).outcome.status).toBe('Completed');
  expect(historySeen[0]).toBeGreaterThanOrEqual(1);
  expect(await status('idle-0')).toBe('RUNNING');
}, 180_000);
