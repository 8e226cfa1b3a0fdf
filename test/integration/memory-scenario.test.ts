/**
 * Seed scenario 1 end to end: "what did I work on yesterday" → the scripted model recalls memory
 * for yesterday's range (computed from the message's receivedAt) → the turn completes with those
 * entries, and the audit holds the MemoryAccess beside the ToolCall. Plus the Untrusted ceiling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import type { LlmStepRequest } from '../../core/llm.js';
import { textContent } from '../../core/message.js';
import { createMemoryStore, type MemoryStore } from '../../infra/memory-store.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { parseMemoryWriteInput } from '../../core/tools/memory-write.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const DAY = 86_400_000;

const script = {
  rules: [
    {
      name: 'yesterday',
      regex: 'what did i work on yesterday',
      steps: [
        // One bound as a number through $number, the other as ISO text: memory.recall reads both.
        {
          call: [
            { tool: 'memory.recall', input: { from: { $number: '{{date.yesterday.start.ms}}' }, to: '{{date.yesterday.end}}', limit: 20 } },
          ],
        },
        { say: 'On {{date.yesterday}} you worked on: {{result.0.output.entries}}', sayOnFailure: 'I could not recall: {{results}}' },
      ],
    },
    {
      name: 'remember',
      regex: '^remember (.+)$',
      steps: [
        { call: [{ tool: 'memory.write', input: { text: '{{match.1}}', topic: 'notes' } }] },
        { say: 'stored {{result.0.output.id}}', sayOnFailure: '{{results}}' },
      ],
    },
    {
      name: 'everything',
      match: 'recall everything',
      steps: [{ call: [{ tool: 'memory.recall', input: {} }] }, { say: '{{result.0.output.entries}}', sayOnFailure: '{{results}}' }],
    },
    {
      name: 'public',
      match: 'recall public',
      steps: [
        { call: [{ tool: 'memory.recall', input: { public: true } }] },
        { say: '{{result.0.output.entries}}', sayOnFailure: '{{results}}' },
      ],
    },
  ],
};

describe('scripted date templates', () => {
  const at = Date.UTC(2026, 11, 2, 9, 30);
  const req = (receivedAt: number): LlmStepRequest => ({
    turnId: 't',
    step: 0,
    history: [],
    message: { id: 'm', sessionId: 's', content: textContent('x'), receivedAt },
    transcript: [],
    tools: [],
  });
  const sink = { text: () => undefined, heartbeat: () => undefined, signal: new AbortController().signal };

  it("come from the message's receivedAt (UTC days, end exclusive), as ISO text or epoch ms via $number", async () => {
    const llm = createScriptedProvider({
      rules: [
        {
          steps: [
            {
              call: [
                {
                  tool: 'memory.recall',
                  input: {
                    a: '{{date.now}} {{date.today}} {{date.yesterday}}',
                    b: '{{date.yesterday.start}} {{date.yesterday.end}} {{date.today.start}} {{date.today.end}}',
                    c: { $number: '{{date.yesterday.start.ms}}' },
                    d: { $number: ' {{date.now.ms}} ' },
                  },
                },
              ],
            },
          ],
        },
      ],
    });
    // (Its token count is the scripted model's estimate: docs/SCRIPTED-LLM.md.)
    const { usage, ...out } = await llm.step(req(at), sink);
    expect(usage?.outputTokens).toBeGreaterThan(0);
    expect(out).toEqual({
      type: 'tool_calls',
      calls: [
        {
          callId: 's0c0',
          tool: 'memory.recall',
          input: {
            a: '2026-12-02T09:30:00.000Z 2026-12-02 2026-12-01',
            b: '2026-12-01T00:00:00.000Z 2026-12-02T00:00:00.000Z 2026-12-02T00:00:00.000Z 2026-12-03T00:00:00.000Z',
            c: Date.UTC(2026, 11, 1),
            d: at,
          },
        },
      ],
    });
  });

  it('refuses unknown date variables at load and a non-numeric $number at run time', async () => {
    expect(() => createScriptedProvider({ rules: [{ steps: [{ say: '{{date.tomorrow}}' }] }] })).toThrow(/unknown template variable/);
    expect(() =>
      createScriptedProvider({ rules: [{ steps: [{ call: [{ tool: 'x', input: { n: { $number: 1, other: 2 } } }] }] }] }),
    ).toThrow(/unknown key/);
    const llm = createScriptedProvider({ rules: [{ steps: [{ call: [{ tool: 'x', input: { n: { $number: '{{date.today}}' } } }] }] }] });
    await expect(llm.step(req(at), sink)).rejects.toMatchObject({ kind: 'Llm' });
  });
});

describe('memory scenario (seed scenario 1)', () => {
  let h: Harness;
  let store: MemoryStore;
  const now = Date.now();
  const yesterday = Math.floor(now / DAY) * DAY - DAY;

  beforeAll(async () => {
    // The worker's own memory tools (the default wiring); the test writes the earlier days' entries
    // through a second store over the same database and key, as another process would.
    h = await startHarness({ script });
    store = createMemoryStore({
      db: h.db,
      domain: SealedStorage.open(h.db, h.master).domain('memory'),
      memoryKey: h.master.subkey('memory'),
    });
    const put = (id: string, text: string, at: number, extra: object = {}) =>
      store.write(parseMemoryWriteInput({ text, ...extra }), { id: store.idFor(id), at });
    await put('seed/1', 'Fixed the flaky login test in the auth service', yesterday + 9 * 3_600_000, { session: 'cli-main' });
    await put('seed/2', 'Reviewed the billing migration PR', yesterday + 15 * 3_600_000, { topic: 'work' });
    await put('seed/3', 'Drafted the quarterly roadmap', yesterday - DAY + 11 * 3_600_000);
    await put('seed/4', 'Public: soup recipe with lentils', yesterday - DAY, { topic: 'recipes', public: true });
  }, 120_000);
  afterAll(async () => h?.stop());

  it("answers 'what did I work on yesterday' from yesterday's entries only, audited", async () => {
    const { turnId, outcome } = await h.turn('What did I work on yesterday?');
    expect(outcome.status).toBe('Completed');
    const text = outcome.status === 'Completed' ? outcome.finalMessage : '';
    expect(text).toContain(new Date(yesterday).toISOString().slice(0, 10));
    expect(text).toContain('Fixed the flaky login test in the auth service');
    expect(text).toContain('Reviewed the billing migration PR');
    expect(text).not.toContain('quarterly roadmap');
    expect(text).not.toContain('lentils');
    // Newest first.
    expect(text.indexOf('billing')).toBeLessThan(text.indexOf('flaky'));

    const audit = await h.audit(turnId);
    const access = audit.filter((e): e is Extract<AuditEvent, { type: 'MemoryAccess' }> => e.type === 'MemoryAccess');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ operation: 'Read', scope: 'memory.read', turnId });
    expect(access[0]?.queryOrKey).toBe(
      `query:none from:${new Date(yesterday).toISOString()} to:${new Date(yesterday + DAY).toISOString()}`,
    );
    expect(audit).toContainEqual(
      expect.objectContaining({
        type: 'ToolCall',
        toolId: 'memory.recall',
        scopeUsed: 'memory.read',
        outcome: expect.stringContaining('Completed'),
      }),
    );
    // The audit names no memory text.
    expect(JSON.stringify(audit)).not.toContain('flaky');
    expect((await h.verify()).ok).toBe(true);
  });

  it('stores a note through memory.write with a MemoryAccess Write naming its id', async () => {
    const { turnId, outcome } = await h.turn('remember ship the memory tools on Friday');
    expect(outcome.status).toBe('Completed');
    const id = outcome.status === 'Completed' ? outcome.finalMessage.replace('stored ', '') : '';
    expect(id).toMatch(/^m_[0-9a-f]{32}$/);
    const found = await store.recall({ query: 'memory tools friday', limit: 5 });
    expect(found.entries.map((e) => e.id)).toEqual([id]);
    const audit = await h.audit(turnId);
    expect(audit).toContainEqual(
      expect.objectContaining({ type: 'MemoryAccess', operation: 'Write', scope: 'memory.write:topic:notes', queryOrKey: id }),
    );
    expect(audit).toContainEqual(expect.objectContaining({ type: 'ToolCall', toolId: 'memory.write', outcome: 'Completed(Verified)' }));
  });

  it('denies an Untrusted turn a non-public recall, and lets it read the public space only', async () => {
    const denied = await h.turn('recall everything', { tier: 'Untrusted' });
    expect(denied.outcome.status).toBe('Completed');
    expect(denied.outcome.status === 'Completed' && denied.outcome.finalMessage).toBe('memory.recall: Denied (needs memory.read)');
    const audit = await h.audit(denied.turnId);
    expect(audit).toContainEqual(
      expect.objectContaining({ type: 'ScopeDenied', toolAttempted: 'memory.recall', scopeRequested: 'memory.read', scopeQualifier: null }),
    );
    expect(audit.some((e) => e.type === 'MemoryAccess')).toBe(false);

    const pub = await h.turn('recall public', { tier: 'Untrusted' });
    const text = pub.outcome.status === 'Completed' ? pub.outcome.finalMessage : '';
    expect(text).toContain('lentils');
    expect(text).not.toContain('flaky');
    expect(text).not.toContain('billing');
    expect(await h.audit(pub.turnId)).toContainEqual(
      expect.objectContaining({ type: 'MemoryAccess', operation: 'Read', scope: 'memory.read:scope:public:*' }),
    );
  });
});
