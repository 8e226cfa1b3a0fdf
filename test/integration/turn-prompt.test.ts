/**
 * What a real turn sends the model (through Temporal, the worker's llmStep): the system prompt,
 * the context line, only the tools the turn's tier could ever grant, and the same prefix on the
 * next turn of the session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { SYSTEM_PROMPT } from '../../activities/llm/system-prompt.js';
import type { LlmStepRequest } from '../../core/llm.js';
import { findTool } from '../../core/tool-catalog.js';
import { TOOLS_LOAD } from '../../core/tools/tools-load.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

let h: Harness;
const seen = new Map<string, LlmStepRequest>();

beforeAll(async () => {
  const inner = createScriptedProvider({ rules: [{ steps: [{ say: 'fine' }] }] });
  const recording: LlmProvider = {
    name: 'recording',
    step: (req, sink) => {
      seen.set(req.turnId, req);
      return inner.step(req, sink);
    },
  };
  h = await startHarness({ llm: recording, agent: { budgetMs: 30_000 } });
}, 120_000);
afterAll(async () => h?.stop());

/** The tools a step offers: in full, and by name in the index of `tools.load` (core/tool-offer.ts). */
function offered(req: LlmStepRequest): string[] {
  const index = req.tools.find((t) => t.id === TOOLS_LOAD)?.description ?? '';
  const named = [...index.matchAll(/^([a-z][a-z.]*): /gm)].map((m) => m[1]!);
  return [...req.tools.map((t) => t.id).filter((id) => id !== TOOLS_LOAD), ...named];
}

/** The effective capabilities a turn's TurnStarted entry recorded. */
async function effectiveOf(turnId: string): Promise<string[]> {
  const started = (await h.audit(turnId)).find((e) => e.type === 'TurnStarted');
  return started?.type === 'TurnStarted' ? started.effectiveCapabilities : [];
}

describe('the prompt of a turn', () => {
  it('a SemiTrusted turn is offered only the tools its effective capabilities could grant; a Trusted one more', async () => {
    const semi = await h.turn('hello', { tier: 'SemiTrusted' });
    const trusted = await h.turn('hello', { tier: 'Trusted' });
    const semiTools = offered(seen.get(semi.turnId)!);
    const trustedTools = offered(seen.get(trusted.turnId)!);
    const held = await effectiveOf(semi.turnId);
    for (const id of semiTools) expect(held.some((s) => s.split(':')[0] === findTool(id)?.scopeBase)).toBe(true);
    expect(semiTools).not.toContain('shell.exec');
    expect(trustedTools).toContain('shell.exec');
    expect(semiTools.length).toBeLessThan(trustedTools.length);
    expect(semiTools.every((id) => findTool(id) !== undefined)).toBe(true);
  }, 120_000);

  it('sends the system prompt and the context line, and repeats the prefix on the next turn of the session', async () => {
    const sessionId = `prompt-${Date.now()}`;
    const first = await h.turn('first question', { sessionId });
    const second = await h.turn('second question', { sessionId });
    const a = seen.get(first.turnId)!;
    const b = seen.get(second.turnId)!;
    expect(a.system).toBe(SYSTEM_PROMPT);
    expect(a.context).toMatch(/^\[Now: \w+ \d{4}-\d{2}-\d{2} \d{2}:\d{2}, the owner's time zone .+\.\]$/);
    expect(JSON.stringify(b.tools)).toBe(JSON.stringify(a.tools));
    expect(b.system).toBe(a.system);
    expect(b.history).toEqual([
      { role: 'user', text: 'first question' },
      { role: 'assistant', text: 'fine' },
    ]);
  }, 120_000);
});
