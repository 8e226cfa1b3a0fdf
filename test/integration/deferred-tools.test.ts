/**
 * Deferred tools through a real turn (Temporal, the worker's llmStep): the model is shown the core
 * tools in full and the rest by name in `tools.load`; loading one offers its schema from the next
 * step and for the rest of the session; a granted tool called without loading runs as before; and
 * loading never widens authority (a SemiTrusted turn cannot load shell.exec).
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { awaitTurnOutcome, buildTurnRequest } from '../../channels/turn-client.js';
import type { LlmStepRequest } from '../../core/llm.js';
import { textContent } from '../../core/message.js';
import type { ToolResult } from '../../core/tools.js';
import { TOOLS_LOAD } from '../../core/tools/tools-load.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

let h: Harness;
/** Every request the model got, per turn, in step order. */
const seen = new Map<string, LlmStepRequest[]>();
const dir = tmpdir();

beforeAll(async () => {
  const inner = createScriptedProvider({
    rules: [
      {
        match: 'load metadata',
        steps: [
          { call: [{ tool: TOOLS_LOAD, input: { tools: ['fs.metadata'] } }] },
          { call: [{ tool: 'fs.metadata', input: { path: dir } }] },
          { say: 'it is a directory' },
        ],
      },
      {
        match: 'direct metadata',
        steps: [{ call: [{ tool: 'fs.metadata', input: { path: dir } }] }, { say: 'ran', sayOnFailure: 'failed' }],
      },
      {
        match: 'load shell',
        steps: [{ call: [{ tool: TOOLS_LOAD, input: { tools: ['shell.exec'] } }] }, { say: 'loaded', sayOnFailure: 'refused' }],
      },
      { steps: [{ say: 'fine' }] },
    ],
  });
  const recording: LlmProvider = {
    name: 'recording',
    step: (req, sink) => {
      seen.set(req.turnId, [...(seen.get(req.turnId) ?? []), req]);
      return inner.step(req, sink);
    },
  };
  h = await startHarness({ llm: recording, agent: { budgetMs: 30_000 } });
}, 120_000);
afterAll(async () => h?.stop());

const toolIds = (req: LlmStepRequest | undefined): string[] => req?.tools.map((t) => t.id) ?? [];
/** The results the model was shown in step `step` (those of the step before). */
function resultsAt(turnId: string, step: number): ToolResult[] {
  const transcript = seen.get(turnId)?.[step]?.transcript ?? [];
  return transcript.flatMap((item) => (item.role === 'tool' ? item.results : []));
}

describe('deferred tools in a turn', () => {
  it('a turn loads a deferred tool, is offered its schema from the next step, calls it, and the session keeps it loaded', async () => {
    const sessionId = `deferred-${Date.now()}`;
    const first = await h.turn('please load metadata', { sessionId });
    expect(first.outcome).toMatchObject({ status: 'Completed', finalMessage: 'it is a directory', toolCallsMade: 1 });
    const steps = seen.get(first.turnId)!;
    expect(toolIds(steps[0])).not.toContain('fs.metadata');
    expect(toolIds(steps[0])).toContain(TOOLS_LOAD);
    expect(steps[0]!.tools.find((t) => t.id === TOOLS_LOAD)!.description).toContain('\nfs.metadata: ');
    expect(toolIds(steps[1])).toEqual([...toolIds(steps[0]), 'fs.metadata']);
    expect(resultsAt(first.turnId, 1)[0]!.outcome).toMatchObject({ status: 'Completed', output: { loaded: ['fs.metadata'] } });
    expect(resultsAt(first.turnId, 2).at(-1)!.outcome).toMatchObject({ status: 'Completed', output: { exists: true, type: 'directory' } });
    // The load ran nothing: only the fs.metadata call was audited.
    const audited = (await h.audit(first.turnId)).flatMap((e) => (e.type === 'ToolCall' ? [e.toolId] : []));
    expect(audited).toEqual(['fs.metadata']);

    // The next turn of the session starts with it loaded: the same tools, byte for byte.
    const second = await h.turn('second question', { sessionId });
    expect(JSON.stringify(seen.get(second.turnId)![0]!.tools)).toBe(JSON.stringify(steps[1]!.tools));
    // A new session starts with the core set again.
    const fresh = await h.turn('another question');
    expect(JSON.stringify(seen.get(fresh.turnId)![0]!.tools)).toBe(JSON.stringify(steps[0]!.tools));
  }, 120_000);

  it('a granted tool called without loading runs exactly as before (offering is no authority either way)', async () => {
    const { turnId, outcome } = await h.turn('direct metadata please');
    expect(toolIds(seen.get(turnId)![0])).not.toContain('fs.metadata');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'ran', toolCallsMade: 1 });
    expect(resultsAt(turnId, 1)[0]!.outcome.status).toBe('Completed');
  }, 120_000);

  it('attack: a SemiTrusted turn asking to load shell.exec is refused, and is never offered it', async () => {
    const { turnId, outcome } = await h.turn('load shell now', { tier: 'SemiTrusted' });
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'refused', toolCallsMade: 0 });
    const refused = resultsAt(turnId, 1)[0]!.outcome;
    expect(refused).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });
    expect(refused.status === 'Failed' && refused.error.message).toContain('"shell.exec" is not a tool this conversation may use');
    for (const req of seen.get(turnId)!) {
      expect(toolIds(req)).not.toContain('shell.exec');
      expect(req.tools.find((t) => t.id === TOOLS_LOAD)?.description ?? '').not.toContain('shell.exec');
    }
  }, 120_000);

  it('attack: a SemiTrusted turn started with a forged "loaded" list naming shell.exec is not offered it', async () => {
    const channel = h.facts('SemiTrusted');
    const req = h.attestor.attest(
      buildTurnRequest(channel, { id: randomUUID(), sessionId: channel.sessionId, content: textContent('hello'), receivedAt: Date.now() }),
    );
    // The second argument is the session's (unattested): anyone at the frontend can write it.
    const carried = { loadedTools: ['shell.exec', 'fs.write', 'fs.metadata'] };
    await h.client.workflow.start('turnWorkflow', { workflowId: req.turnId, taskQueue: h.taskQueue, args: [req, carried] });
    const outcome = await awaitTurnOutcome(h.client, req.turnId);
    expect(outcome.status).toBe('Completed');
    const offered = toolIds(seen.get(req.turnId)?.[0]);
    expect(offered).not.toContain('shell.exec');
    expect(offered).not.toContain('fs.write');
  }, 120_000);
});
