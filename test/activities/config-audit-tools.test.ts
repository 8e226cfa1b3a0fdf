/** config.read / config.write (secrets never readable) and audit.read (type filter, caps, scope forms). */
import { describe, expect, it } from 'vitest';
import { createAuditReadTool, type AuditReadRow } from '../../activities/tools/audit-read.js';
import { createConfigTools, createMemoryConfigStore } from '../../activities/tools/config-tools.js';
import type { ToolRunContext } from '../../activities/tools/tool-implementation.js';
import { CapabilitySet, effectiveCapabilities, tierCeiling } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import { auditReadTool, configReadTool, configWriteTool } from '../../core/tools/config-tools.js';

const CONFIG_TOOLS = [configReadTool, configWriteTool];
const AUDIT_TOOLS = [auditReadTool];
import { aivyxFailure } from '../support/aivyx-failure.js';

const ctx: ToolRunContext = {
  signal: new AbortController().signal,
  heartbeat: () => undefined,
  idemKey: 'k',
  turnId: 't',
  held: [],
  recordMemoryAccess: async () => undefined,
};

describe('config descriptors', () => {
  it('scope by key; keys cannot be globs or forge qualifiers', () => {
    expect(CONFIG_TOOLS.map((t) => t.id)).toEqual(['config.read', 'config.write']);
    expect(configReadTool.requiredScope({ key: 'llm.model' })).toBe('config.read:llm.model');
    expect(configWriteTool.requiredScope({ key: 'llm.model', value: 'x' })).toBe('config.write:llm.model');
    for (const key of ['llm.*', 'a:b', '', ' x', 'a?']) expect(() => configReadTool.requiredScope({ key })).toThrow(AivyxError);
    expect(CapabilitySet.from(['config.read:llm.*']).grants(configReadTool.requiredScope({ key: 'llm.model' }))).toBe(true);
    expect(CapabilitySet.from(['config.read:llm.*']).grants(configReadTool.requiredScope({ key: 'net.proxy' }))).toBe(false);
  });
});

describe('config tools', () => {
  const store = createMemoryConfigStore({ 'llm.model': 'gpt', 'openai.apiKey': 'sk-1', 'telegram.botToken': 'b', mailer: 'smtp://u:p@h' }, [
    'mailer',
  ]);
  const [read, write] = createConfigTools({ store }) as [
    NonNullable<ReturnType<typeof createConfigTools>[0]>,
    NonNullable<ReturnType<typeof createConfigTools>[0]>,
  ];

  it('reads and writes plain keys (write verified by reading back)', async () => {
    expect(await read.run({ key: 'llm.model' }, ctx)).toEqual({
      kind: 'completed',
      output: { key: 'llm.model', value: 'gpt' },
      verified: 'NotApplicable',
    });
    expect(await read.run({ key: 'unset.key2' }, ctx)).toMatchObject({ output: { value: null } });
    expect(await write.run({ key: 'llm.model', value: 'claude' }, ctx)).toEqual({
      kind: 'completed',
      output: { key: 'llm.model', previous: 'gpt' },
      verified: 'Verified',
    });
    expect(await store.get('llm.model')).toBe('claude');
  });

  it('never reads or writes a secret (by pattern or by secrets-store name)', async () => {
    for (const key of ['openai.apiKey', 'telegram.botToken', 'db.password', 'Mailer', 'x.secret.y']) {
      const e = await aivyxFailure(read.run({ key }, ctx));
      expect(e.kind).toBe('CapabilityDenied');
      expect(e.message).toContain('secret');
      expect(JSON.stringify(e.toData())).not.toContain('sk-1');
    }
    expect((await aivyxFailure(write.run({ key: 'openai.apiKey', value: 'x' }, ctx))).kind).toBe('CapabilityDenied');
    expect(await store.get('openai.apiKey')).toBe('sk-1');
  });
});

describe('audit.read', () => {
  const rows: AuditReadRow[] = Array.from({ length: 300 }, (_, i) => ({
    seq: i + 1,
    turnId: `t${i}`,
    eventType: i % 3 === 0 ? 'ToolCall' : 'TurnStarted',
    event: { type: i % 3 === 0 ? 'ToolCall' : 'TurnStarted', inputHash: 'ab'.repeat(32) },
    recordedAt: new Date(1_800_000_000_000 + i),
  }));
  const asked: number[] = [];
  const bySession: string[] = [];
  const tool = createAuditReadTool({
    reader: {
      tail: async (n) => (asked.push(n), rows.slice(-n)),
      // Turns t0..t299: even ones in session "mine" (the real query is proven against PostgreSQL in test/integration/confinement-turns.test.ts).
      tailOfSession: async (sessionId, n) => (
        bySession.push(sessionId),
        rows.filter((r) => sessionId === 'mine' && Number(r.turnId?.slice(1)) % 2 === 0).slice(-n)
      ),
    },
  });
  const all = (input: Record<string, unknown>) => ({ ...input, allSessions: true });

  it('scope forms: audit.read:own-session by default; with allSessions audit.read:<Type>, audit.read:* without a type', () => {
    expect(AUDIT_TOOLS.map((t) => t.id)).toEqual(['audit.read']);
    expect(auditReadTool.requiredScope({})).toBe('audit.read:own-session');
    expect(auditReadTool.requiredScope({ type: 'ToolCall' })).toBe('audit.read:own-session');
    expect(auditReadTool.requiredScope(all({ type: 'ToolCall' }))).toBe('audit.read:ToolCall');
    expect(auditReadTool.requiredScope(all({}))).toBe('audit.read:*');
    expect(() => auditReadTool.requiredScope({ type: 'public' })).toThrow(AivyxError);
    expect(() => auditReadTool.requiredScope({ type: 'Tool*' })).toThrow(AivyxError);
    expect(() => auditReadTool.requiredScope({ limit: 101 })).toThrow(AivyxError);
    expect(() => auditReadTool.requiredScope({ allSessions: 'yes' })).toThrow(AivyxError);
  });

  it('tier ceilings: Untrusted reads nothing, SemiTrusted only its own session, a typed grant only its type (all sessions)', () => {
    const agent = CapabilitySet.from(['audit.read']);
    const untrusted = effectiveCapabilities(agent, 'Untrusted');
    for (const input of [{}, { type: 'ToolCall' }, all({}), all({ type: 'ToolCall' })])
      expect(untrusted.grants(auditReadTool.requiredScope(input))).toBe(false);
    const semi = effectiveCapabilities(agent, 'SemiTrusted');
    expect(semi.grants(auditReadTool.requiredScope({}))).toBe(true);
    expect(semi.grants(auditReadTool.requiredScope({ type: 'ToolCall' }))).toBe(true);
    expect(semi.grants(auditReadTool.requiredScope(all({})))).toBe(false);
    expect(semi.grants(auditReadTool.requiredScope(all({ type: 'ToolCall' })))).toBe(false);
    const typed = CapabilitySet.from(['audit.read:ToolCall']).intersect(tierCeiling('Trusted'));
    expect(typed.grants(auditReadTool.requiredScope(all({ type: 'ToolCall' })))).toBe(true);
    expect(typed.grants(auditReadTool.requiredScope(all({ type: 'TurnStarted' })))).toBe(false);
    expect(typed.grants(auditReadTool.requiredScope(all({})))).toBe(false); // rule 4-style: a narrower grant never grants "every type"
    expect(typed.grants(auditReadTool.requiredScope({}))).toBe(false); // nor "every type of this session"
  });

  it('own session: reads through the session port with the session the activity gives, never the whole log', async () => {
    asked.length = 0;
    const mine = await tool.run({ limit: 5 }, { ...ctx, sessionId: 'mine' });
    expect(mine.kind === 'completed' && (mine.output as { entries: { turnId: string }[] }).entries.map((e) => e.turnId)).toEqual([
      't290',
      't292',
      't294',
      't296',
      't298',
    ]);
    expect(bySession).toEqual(['mine']);
    expect(asked).toEqual([]);
    const other = await tool.run({ limit: 5 }, { ...ctx, sessionId: 'someone-else' });
    expect(other.kind === 'completed' && (other.output as { entries: unknown[] }).entries).toEqual([]);
    // A call that does not know its session (an old history's runTool input) reads nothing.
    const e = await aivyxFailure(tool.run({ limit: 5 }, ctx));
    expect(e.message).toMatch(/does not know its session/);
  });

  it('filters by type and never returns more than the limit', async () => {
    const latest = await tool.run(all({ limit: 5 }), ctx);
    expect(latest.kind === 'completed' && (latest.output as { entries: { seq: number }[] }).entries.map((e) => e.seq)).toEqual([
      296, 297, 298, 299, 300,
    ]);
    const calls = await tool.run(all({ type: 'ToolCall', limit: 100 }), ctx);
    if (calls.kind !== 'completed') throw new Error('expected completed');
    const out = calls.output as { entries: { type: string; seq: number; recordedAt: string }[]; truncated: boolean };
    expect(out.entries).toHaveLength(100);
    expect(out.truncated).toBe(false);
    expect(out.entries.every((e) => e.type === 'ToolCall')).toBe(true);
    expect(out.entries.at(-1)?.seq).toBe(298);
    const few = await tool.run(all({ type: 'ToolCall', limit: 3 }), ctx);
    expect(few.kind === 'completed' && (few.output as { truncated: boolean }).truncated).toBe(true);
    expect(Math.max(...asked)).toBeLessThanOrEqual(1000);
    const dflt = await tool.run(all({}), ctx);
    expect(dflt.kind === 'completed' && (dflt.output as { entries: unknown[] }).entries).toHaveLength(20);
  });
});
