/**
 * The seed's turn loop against the real dev server and real PostgreSQL: trust tiers, scope
 * checks, the five outcomes, batches, attestation, ordering and redelivery.
 */
import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import type { HistoryEntry } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { buildTurnRequest, startHarness, submitTurn, type Harness } from '../support/turn-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-turn-'));
const marker = join(dir, 'marker');
const note = join(dir, 'note.txt');

// One script for the whole file: each rule is one scenario, picked by the message text.
const script = {
  rules: [
    {
      match: 'rm -rf',
      steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['touch', marker] } }] }, { say: 'I could not: {{results}}' }],
    },
    { match: 'slow tool', steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['sleep', '2'] } }] }, { say: 'done sleeping' }] },
    { match: 'think forever', steps: [{ say: 'too late', delayMs: 20_000 }] },
    {
      match: 'three at once',
      steps: [{ call: [1, 2, 3].map(() => ({ tool: 'shell.exec', input: { argv: ['sleep', '1'] } })) }, { say: '{{results}}' }],
    },
    {
      match: 'write the note',
      steps: [
        { call: [{ tool: 'fs.write', input: { path: note, content: 'hello from a turn' } }] },
        { say: 'wrote it: {{result.0.status}}' },
      ],
    },
    { match: 'echo', steps: [{ say: 'echo: {{message}}' }] },
    { steps: [{ say: 'hello there' }] },
  ],
};

let h: Harness;
let llmCalls = 0;
const historySeen = new Map<string, HistoryEntry[]>();

beforeAll(async () => {
  const inner = createScriptedProvider(script);
  const counting: LlmProvider = {
    name: 'counting',
    step: (req, sink) => {
      llmCalls++;
      historySeen.set(req.turnId, req.history);
      return inner.step(req, sink);
    },
  };
  h = await startHarness({ llm: counting, agent: { budgetMs: 5_000 } });
});
afterAll(async () => h?.stop());

describe('turn loop', () => {
  it('completes a plain turn and audits TurnStarted and TurnEnded with the effective capabilities', async () => {
    const { turnId, outcome } = await h.turn('hi');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'hello there', toolCallsMade: 0 });
    const events = await h.audit(turnId);
    expect(events.map((e) => e.type)).toEqual(['TurnStarted', 'TurnEnded']);
    const started = events[0];
    expect(started?.type === 'TurnStarted' && started.trustTier).toBe('Trusted');
    expect(started?.type === 'TurnStarted' && started.effectiveCapabilities).toContain('shell.exec');
  });

  it('seed scenario 3: a SemiTrusted turn asking for shell.exec is denied, audited with the held set, and nothing runs', async () => {
    const { turnId, outcome } = await h.turn('run rm -rf ~', { tier: 'SemiTrusted' });
    expect(outcome.status).toBe('Completed');
    expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(/Denied/);
    expect(existsSync(marker)).toBe(false);
    const events = await h.audit(turnId);
    const denied = events.find((e) => e.type === 'ScopeDenied');
    expect(denied).toMatchObject({
      type: 'ScopeDenied',
      toolAttempted: 'shell.exec',
      scopeRequested: 'shell.exec',
      scopeQualifier: 'touch',
    });
    const started = events.find((e) => e.type === 'TurnStarted');
    expect(denied?.type === 'ScopeDenied' && denied.heldCapabilities).toEqual(
      started?.type === 'TurnStarted' && started.effectiveCapabilities,
    );
    expect(denied?.type === 'ScopeDenied' && denied.heldCapabilities.some((s) => s.startsWith('shell.'))).toBe(false);
    expect(events.some((e) => e.type === 'ToolCall')).toBe(false);
  });

  it('runs a granted tool as an activity that verifies its effect and audits a ToolCall with an input hash only', async () => {
    const { turnId, outcome } = await h.turn('please write the note');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'wrote it: Completed', toolCallsMade: 1 });
    expect(readFileSync(note, 'utf8')).toBe('hello from a turn');
    const call = (await h.audit(turnId)).find((e) => e.type === 'ToolCall');
    expect(call).toMatchObject({ type: 'ToolCall', toolId: 'fs.write', outcome: 'Completed(Verified)' });
    expect(call?.type === 'ToolCall' && call.inputHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(call)).not.toContain('hello from a turn');
  });

  it('seed scenario 4: cancel during a slow tool lets the tool finish, ends Cancelled and writes TurnEnded', async () => {
    let cancelled = false;
    const messageId = randomUUID();
    const { turnId, outcome, events } = await h.turn('slow tool please', {
      messageId,
      onEvent: (e) => {
        if (e.type === 'tool_started' && !cancelled) {
          cancelled = true;
          void h.client.workflow.getHandle(turnWorkflowId('test', messageId)).cancel();
        }
      },
    });
    expect(outcome).toMatchObject({ status: 'Cancelled', toolCallsMade: 1 });
    expect(events.some((e) => e.type === 'tool_finished')).toBe(true);
    const audit = await h.audit(turnId);
    expect(audit.find((e) => e.type === 'ToolCall')).toMatchObject({ toolId: 'shell.exec', outcome: 'Completed(Unverified)' });
    expect(audit.at(-1)).toMatchObject({ type: 'TurnEnded', outcome: 'Cancelled' });
    // The model was not asked again after the cancel.
    expect(events.some((e) => e.type === 'text')).toBe(false);
  });

  it('ends TimedOut when the turn budget runs out, still writing TurnEnded', async () => {
    const { turnId, outcome } = await h.turn('think forever');
    expect(outcome.status).toBe('TimedOut');
    expect((await h.audit(turnId)).at(-1)).toMatchObject({ type: 'TurnEnded', outcome: 'TimedOut' });
  });

  it('runs the three calls of one batch concurrently', async () => {
    const { outcome, events } = await h.turn('three at once');
    expect(outcome).toMatchObject({ status: 'Completed', toolCallsMade: 3 });
    // Every call started before any finished: they overlapped.
    const order = events.filter((e) => e.type === 'tool_started' || e.type === 'tool_finished').map((e) => e.type);
    expect(order).toEqual(['tool_started', 'tool_started', 'tool_started', 'tool_finished', 'tool_finished', 'tool_finished']);
  });

  it('a forged trust tier (no or a wrong attestation) ends Failed, audited, with no LLM call', async () => {
    const before = llmCalls;
    const channel = h.facts('Trusted');
    const msg = { id: randomUUID(), sessionId: channel.sessionId, content: textContent('echo hi'), receivedAt: Date.now() };
    const unattested = buildTurnRequest(channel, msg);
    const noMac = await h.rawTurn(unattested);
    expect(noMac).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });

    // Attested as SemiTrusted, then edited to claim Trusted.
    const semi = h.attestor.attest(buildTurnRequest(h.facts('SemiTrusted'), { ...msg, id: randomUUID() }));
    const forged = { ...semi, turnId: `${semi.turnId}-forged`, channel: { ...semi.channel, trustTier: 'Trusted' as const } };
    const edited = await h.rawTurn(forged);
    expect(edited).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });
    expect(edited.status === 'Failed' && edited.error.message).toMatch(/forged or altered/);

    const kernel = h.attestor.attest(buildTurnRequest(h.facts('Kernel' as never), { ...msg, id: randomUUID() }));
    expect(await h.rawTurn(kernel)).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });

    expect(llmCalls).toBe(before);
    const audit = await h.audit(unattested.turnId);
    expect(audit.map((e) => e.type)).toEqual(['TurnRejected', 'TurnEnded']);
    expect(audit[1]).toMatchObject({ outcome: 'Failed(CapabilityDenied)' });
  });

  it('a redelivered message runs one turn', async () => {
    const channel = h.facts('Trusted');
    const msg = { id: randomUUID(), sessionId: channel.sessionId, content: textContent('echo once'), receivedAt: Date.now() };
    const first = await submitTurn(h.gateway['deps'], buildTurnRequest(channel, msg));
    const again = await submitTurn(h.gateway['deps'], buildTurnRequest(channel, msg));
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ turnWorkflowId: first.turnWorkflowId, duplicate: true });
    await h.client.workflow.getHandle(first.turnWorkflowId).result();
    const started = (await h.audit(first.turnWorkflowId)).filter((e) => e.type === 'TurnStarted');
    expect(started).toHaveLength(1);
  });

  it('runs the turns of one session one at a time, in order, with earlier exchanges as context', async () => {
    const sessionId = `s-${randomUUID()}`;
    const a = h.turn('slow tool first', { sessionId });
    await new Promise((r) => setTimeout(r, 300));
    const b = h.turn('echo second', { sessionId });
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.outcome.status).toBe('Completed');
    expect(rb.outcome).toMatchObject({ status: 'Completed', finalMessage: 'echo: echo second' });
    const endA = (await h.audit(ra.turnId)).find((e) => e.type === 'TurnEnded');
    const startB = (await h.audit(rb.turnId)).find((e) => e.type === 'TurnStarted');
    const seq = async (turnId: string, type: string) => {
      const rows = await h.db.selectFrom('audit_entries').select(['seq', 'event_type']).where('turn_id', '=', turnId).execute();
      return rows.find((r) => r.event_type === type)?.seq ?? -1;
    };
    expect(endA && startB).toBeTruthy();
    expect(await seq(rb.turnId, 'TurnStarted')).toBeGreaterThan(await seq(ra.turnId, 'TurnEnded'));
    // The second turn's model saw the first exchange, loaded from the sealed sessions domain…
    expect(historySeen.get(rb.turnId)).toEqual([
      { role: 'user', text: 'slow tool first' },
      { role: 'assistant', text: 'done sleeping' },
    ]);
    // …which the database holds only as ciphertext.
    const rows = await h.db.selectFrom('sealed_records').select(['domain', 'ciphertext']).where('domain', '=', 'sessions').execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(Buffer.from(r.ciphertext).toString('latin1')).not.toContain('slow tool first');
  });

  it('leaves a chain that verifies', async () => {
    const result = await h.verify();
    expect(result.ok).toBe(true);
  });
});
