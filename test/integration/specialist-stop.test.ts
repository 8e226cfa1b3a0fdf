/**
 * The owner stops one specialist (issue 33, `agent.terminate`), on the shared dev server with real
 * PostgreSQL and the REST channel in front: `aivyx specialists` lists the running ones, and
 * `aivyx specialists stop <child>` cancels exactly that child workflow, audited; its lead is told the
 * owner stopped it and goes on with the others. A caller without `agent.terminate`, a SemiTrusted
 * caller, and any id that is not a running specialist (the lead itself, its session, an unknown id)
 * are refused, and nothing is cancelled.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { createOwnerSpecialists, type OwnerSpecialists } from '../../app/owner-specialists.js';
import { runSpecialistsCommand } from '../../channels/cli/specialist-commands.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import { messageText, textContent } from '../../core/message.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { parseSpecialists } from '../../core/specialists.js';
import { createAuditPort } from '../../infra/audit-port.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const delegate = (task: string) => ({ tool: 'agent.delegate', input: { specialist: 'researcher', task } });
const script = {
  rules: [
    { match: 'three holds', steps: [{ call: [1, 2, 3].map((i) => delegate(`hold: ${i}`)) }, { say: 'lead: {{results}}' }] },
    { regex: '^hold: \\d$', steps: [{ say: 'held {{message}}' }] },
    { steps: [{ say: 'hello' }] },
  ],
};

// A specialist's first step waits until the test lets it answer: the three run until then.
let release: () => void = () => undefined;
const released = new Promise<void>((r) => (release = r));
const scripted = createScriptedProvider(script);
const llm: LlmProvider = {
  name: scripted.name,
  step: async (req, sink) => {
    const text = messageText(req.message.content);
    if (/^hold: \d$/.test(text)) await released;
    return scripted.step(req, sink);
  },
};

const TOKEN = 'owner-token-for-tests';
let h: Harness;
let owner: OwnerSpecialists;
let rest: Awaited<ReturnType<typeof startRestServer>>;
const ownerWith = (capabilities: string[]) =>
  createOwnerSpecialists({
    client: h.client,
    taskQueue: h.taskQueue,
    audit: createAuditPort(h.db, h.master.subkey('audit')),
    capabilities,
  });

beforeAll(async () => {
  h = await startHarness({
    llm,
    agent: {
      capabilities: ['llm.call', 'agent.delegate', 'agent.terminate'],
      specialists: parseSpecialists([{ name: 'researcher', instructions: 'Research.', capabilities: ['llm.call'] }]),
      budgetMs: 300_000,
    },
  });
  owner = ownerWith(['llm.call', 'agent.delegate', 'agent.terminate']);
  rest = await startRestServer({
    gateway: h.gateway,
    token: TOKEN,
    audit: { verify: () => h.verify(), tail: async () => [] },
    specialists: owner,
  });
}, 120_000);
afterAll(async () => {
  release();
  await rest?.stop();
  await h?.stop();
});

/** `aivyx specialists …` against the REST channel: its exit code and what it printed. */
async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runSpecialistsCommand(args, { url: rest.url, token: TOKEN }, (s) => (out += s));
  return { code, out };
}

/** Polls the owner's list until `n` specialists of `lead` are listed (visibility lags a start by a moment). */
async function listedFor(lead: string, n: number) {
  for (;;) {
    const listed = (await owner.list()).filter((s) => s.leadTurnId === lead);
    if (listed.length >= n) return listed;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const running = async (id: string) => (await h.client.workflow.getHandle(id).describe()).status.name === 'RUNNING';

describe('the owner stops one specialist', () => {
  let lead: string;
  let sessionId: string;
  let outcome: Promise<TurnOutcome>;
  const children = () => [0, 1, 2].map((i) => `${lead}/tool-0-${i}/researcher`);

  beforeAll(async () => {
    const channel = h.facts('Trusted');
    sessionId = channel.sessionId;
    const message = { id: randomUUID(), sessionId: channel.sessionId, content: textContent('three holds'), receivedAt: Date.now() };
    const t = await h.gateway.start(channel, message, () => undefined);
    lead = t.turnWorkflowId;
    outcome = t.outcome;
    await listedFor(lead, 3);
  });

  it('`aivyx specialists` lists the three running children: id, specialist, lead and what each is doing', async () => {
    const listed = await listedFor(lead, 3);
    expect(listed.map((s) => s.childTurnId).sort()).toEqual(children());
    for (const s of listed) expect(s).toMatchObject({ specialist: 'researcher', leadTurnId: lead, state: expect.any(String) });
    const { code, out } = await cli();
    expect(code).toBe(0);
    for (const id of children()) expect(out).toContain(`${id}\n  researcher for lead ${lead} · `);
  });

  it('a caller without agent.terminate, and a SemiTrusted caller, are refused; nothing is cancelled', async () => {
    const [child] = children();
    await expect(ownerWith(['llm.call', 'agent.delegate']).stop(child!)).rejects.toMatchObject({
      kind: 'CapabilityDenied',
      message: expect.stringContaining('needs agent.terminate:researcher'),
    });
    const semi = { identity: '4242', channel: 'telegram', trustTier: 'SemiTrusted' } as const;
    await expect(owner.stop(child!, semi)).rejects.toMatchObject({ kind: 'CapabilityDenied' });
    // Over REST, an install whose capabilities lack it answers 403.
    const narrow = await startRestServer({
      gateway: h.gateway,
      token: TOKEN,
      audit: { verify: () => h.verify(), tail: async () => [] },
      specialists: ownerWith(['llm.call']),
    });
    try {
      const res = await fetch(`${narrow.url}/v1/specialists/${encodeURIComponent(child!)}/stop`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(403);
    } finally {
      await narrow.stop();
    }
    for (const id of children()) expect(await running(id)).toBe(true);
    expect((await h.audit(child!)).filter((e) => e.type === 'SpecialistStopped')).toEqual([]);
    // Each refusal is on the record: who tried, on which channel, what they held.
    expect((await h.audit(child!)).filter((e) => e.type === 'ScopeDenied' && e.toolAttempted === 'agent.terminate')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          callId: 'stop by local-user on rest',
          scopeQualifier: 'researcher',
          heldCapabilities: expect.arrayContaining(['llm.call']),
        }),
        expect.objectContaining({ callId: 'stop by 4242 on telegram', scopeQualifier: 'researcher' }),
      ]),
    );
  });

  it('an id that is not a running specialist — the lead, its session, a look-alike started at the frontend, an unknown child, junk — is refused; nothing is cancelled', async () => {
    const session = sessionWorkflowId('test', sessionId);
    expect(await running(session)).toBe(true);
    // A workflow whose id looks like a child's but that no lead started (its forged request fails at once).
    const lookalike = `${lead}/tool-9-0/researcher`;
    const forged = { turnId: lookalike, message: { id: lookalike, sessionId, content: textContent('hold: 9'), receivedAt: Date.now() } };
    await h.rawTurn({ ...forged, channel: h.facts('Trusted') }).catch(() => undefined);
    for (const id of [lead, session, lookalike, `${lead}/tool-7-0/researcher`, 'not a turn id'])
      await expect(cli('stop', id)).rejects.toMatchObject({
        kind: 'NotFound',
        message: expect.stringContaining('is not a running specialist'),
      });
    expect(await running(lead)).toBe(true);
    for (const id of children()) expect(await running(id)).toBe(true);
  });

  it('stopping one of three ends only it, audited; the lead goes on and its answer says the owner stopped it', async () => {
    const [, stopped, ...others] = [children()[0]!, children()[1]!, children()[2]!];
    const { code, out } = await cli('stop', stopped!);
    expect(code).toBe(0);
    expect(out).toContain(`stopped researcher (${stopped})`);
    expect(((await h.client.workflow.getHandle(stopped!).result()) as TurnOutcome).status).toBe('Cancelled');
    for (const id of [lead, children()[0]!, ...others]) expect(await running(id!)).toBe(true);

    release();
    const ended = await outcome;
    expect(ended.status).toBe('Completed');
    const text = ended.status === 'Completed' ? ended.finalMessage : '';
    expect(text.match(/agent\.delegate: Completed/g)).toHaveLength(2);
    expect(text).toContain('Failed (Cancelled: specialist researcher was stopped by the owner before it answered');
    // The order of results is the calls' order: the second call's child was stopped.
    expect(text.split('; ')[1]).toContain('stopped by the owner');

    expect((await h.audit(stopped!)).filter((e) => e.type === 'SpecialistStopped')).toEqual([
      {
        type: 'SpecialistStopped',
        turnId: stopped,
        parentTurnId: lead,
        specialist: 'researcher',
        by: 'local-user',
        channel: 'rest',
        trustTier: 'Trusted',
      },
    ]);
    expect((await h.audit(stopped!)).find((e) => e.type === 'TurnEnded')).toMatchObject({ outcome: 'Cancelled' });
    // A child that has ended is not stopped again.
    await expect(cli('stop', stopped!)).rejects.toMatchObject({ kind: 'NotFound' });
    expect((await h.verify()).ok).toBe(true);
  });
});
