/**
 * The one-shot grant a gate's approval gives the rerun of its step: it lets exactly one call of
 * exactly that tool with exactly that input skip confirm-first, and it is covered by the attestation.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputHash } from '../../core/canonical-json.js';
import type { TurnRequest } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { buildTurnRequest, startHarness, type Harness } from '../support/turn-harness.js';

const echo = { argv: ['echo', 'granted'] };
const script = {
  rules: [
    {
      match: 'twice',
      steps: [{ call: [{ tool: 'shell.exec', input: echo }] }, { call: [{ tool: 'shell.exec', input: echo }] }, { say: 'done' }],
    },
    { match: 'once', steps: [{ call: [{ tool: 'shell.exec', input: echo }] }, { say: 'ran: {{result.0.output.stdout}}' }] },
  ],
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ script, agent: { confirmFirst: ['shell.exec'] } });
});
afterAll(async () => h?.stop());

/** A mission step's request carrying a grant of that mission's gate (as attestStepTurn builds it). */
function request(text: string, grantHash = inputHash(echo), missionId = `mission-${randomUUID()}`, grantMission = missionId): TurnRequest {
  const channel = h.facts('Trusted');
  const req = buildTurnRequest(channel, {
    id: randomUUID(),
    sessionId: channel.sessionId,
    content: textContent(text),
    receivedAt: Date.now(),
  });
  return {
    ...req,
    turnId: `${missionId}/step-0/run-2`,
    oneShotGrant: { missionId: grantMission, gateId: `${grantMission}/gate-1`, tool: 'shell.exec', inputHash: grantHash },
  };
}

describe('one-shot grant', () => {
  it('without a grant, a confirm-first tool escalates', async () => {
    const { oneShotGrant: _none, ...req } = request('once');
    expect(await h.rawTurn(h.attestor.attest(req))).toMatchObject({ status: 'Escalated', pendingTool: 'shell.exec', pendingInput: echo });
  });

  it('runs the granted call with the granted input', async () => {
    const outcome = await h.rawTurn(h.attestor.attest(request('once')));
    expect(outcome).toMatchObject({ status: 'Completed' });
    expect(outcome.status === 'Completed' && outcome.finalMessage).toContain('granted');
  });

  it('a grant for another input does not apply', async () => {
    expect(await h.rawTurn(h.attestor.attest(request('once', inputHash({ argv: ['rm', '-rf', '/'] }))))).toMatchObject({
      status: 'Escalated',
    });
  });

  it('is used once: a second identical call in the same turn escalates', async () => {
    const req = h.attestor.attest(request('twice'));
    expect(await h.rawTurn(req)).toMatchObject({ status: 'Escalated', toolCallsMade: 2 });
    const calls = (await h.audit(req.turnId)).filter((e) => e.type === 'ToolCall');
    expect(calls.map((e) => (e.type === 'ToolCall' ? e.outcome.split(/[ :(]/)[0] : ''))).toEqual(['Completed', 'RequiresEscalation']);
  });

  it('works once across turns too: a second turn carrying the same (genuinely attested) grant escalates', async () => {
    const missionId = `mission-${randomUUID()}`;
    const first = await h.rawTurn(h.attestor.attest(request('once', inputHash(echo), missionId)));
    expect(first).toMatchObject({ status: 'Completed' });
    const again = h.attestor.attest({ ...request('once', inputHash(echo), missionId), turnId: `${missionId}/step-0/run-3` });
    expect(await h.rawTurn(again)).toMatchObject({ status: 'Escalated', pendingTool: 'shell.exec' });
  });

  it("another mission's grant is refused before any LLM call", async () => {
    const req = h.attestor.attest(request('once', inputHash(echo), `mission-${randomUUID()}`, `mission-${randomUUID()}`));
    expect(await h.rawTurn(req)).toMatchObject({
      status: 'Failed',
      error: { kind: 'CapabilityDenied', message: expect.stringContaining('belongs to mission') },
    });
  });

  it('a grant added after attestation is refused before any LLM call', async () => {
    const { oneShotGrant, ...plain } = request('once');
    const forged = { ...h.attestor.attest(plain), oneShotGrant };
    expect(await h.rawTurn(forged)).toMatchObject({ status: 'Failed', error: { kind: 'CapabilityDenied' } });
  });
});
