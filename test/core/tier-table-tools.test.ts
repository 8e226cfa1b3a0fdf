/**
 * Per-tier tests for every catalog tool, driven by the seed's ceiling table: for each tool in
 * TOOL_CATALOG (whatever it holds when the test runs), for each channel tier, an agent holding every
 * base bare gets `effectiveCapabilities(agent, tier, policy)`, and representative calls'
 * `requiredScope`s are granted or denied exactly as the table's row for that scope's base says:
 * ✓ granted (bare or qualified), ▲ granted only when a qualifier the operator configured (the
 * policy) or the seed names (Untrusted `memory.read:scope:public:*`) grants it — never bare, and
 * nothing at all for a configurable base the policy leaves empty — ⊘ denied.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CapabilitySet,
  EMPTY_TIER_POLICY,
  KNOWN_SCOPE_BASES,
  SEMITRUSTED_POLICY_BASES,
  Scope,
  effectiveCapabilities,
  type TierPolicy,
  type TrustTier,
} from '../../core/capability/index.js';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';
import type { ToolDescriptor } from '../../core/tools.js';

type Cell = '✓' | '▲' | '⊘';
type Tier = Exclude<TrustTier, 'Kernel'>;
const TIERS: readonly Tier[] = ['Trusted', 'SemiTrusted', 'Untrusted'];

/** One row: the three cells, and for a ▲ cell with fixed qualifiers (seed wording "▲ `x` only", or decided), those qualifiers. */
interface Row {
  cells: Record<Tier, Cell>;
  only?: Partial<Record<Tier, readonly string[]>>;
  source: 'seed' | 'decided';
}

const row = (t: Cell, s: Cell, u: Cell, only?: Partial<Record<Tier, readonly string[]>>, source: Row['source'] = 'seed'): Row => ({
  cells: { Trusted: t, SemiTrusted: s, Untrusted: u },
  ...(only ? { only } : {}),
  source,
});

/** The operator policy under test: the SemiTrusted ▲ cells of configurable bases are exactly these. */
const POLICY: TierPolicy = {
  semiTrusted: {
    'fs.read': ['/home/u/shared/**'],
    'fs.write': ['/home/u/shared/**'],
    'git.read': ['/home/u/shared/**'],
    'net.post': ['https://api.example.com/v1'],
    'memory.forget': ['session:s1'],
    'channel.send': ['telegram'],
    'channel.receive': ['telegram'],
    'mission.create': ['notify'],
    'mission.list': ['own'],
    'mission.cancel': ['own'],
  },
};

/** The seed's per-tier ceiling table (D5), row by row, plus the rows decided for later bases. */
const TABLE: Readonly<Record<string, Row>> = {
  'fs.read': row('✓', '▲', '⊘'),
  'fs.write': row('✓', '▲', '⊘'),
  'fs.delete': row('✓', '⊘', '⊘'),
  'fs.metadata': row('✓', '✓', '⊘'),
  'net.fetch': row('✓', '✓', '⊘'),
  'net.post': row('✓', '▲', '⊘'),
  'net.dns': row('✓', '✓', '⊘'),
  'shell.exec': row('✓', '⊘', '⊘'),
  'shell.spawn': row('✓', '⊘', '⊘'),
  'llm.call': row('✓', '✓', '⊘'),
  'llm.embed': row('✓', '✓', '⊘'),
  'memory.read': row('✓', '✓', '▲', { Untrusted: ['scope:public:*'] }),
  'memory.write': row('✓', '✓', '⊘'),
  'memory.forget': row('✓', '▲', '⊘'),
  'channel.send': row('✓', '▲', '⊘'),
  'channel.receive': row('✓', '▲', '⊘'),
  // SemiTrusted: its own session (decided, issue 11); `public` names no event type (reads nothing).
  'audit.read': row('✓', '▲', '▲', { SemiTrusted: ['own-session', 'public'], Untrusted: ['public'] }),
  'config.read': row('✓', '✓', '⊘'),
  'config.write': row('✓', '⊘', '⊘'),
  // Decided in core/capability/trust-tier.ts and the amendments (the seed's table predates them).
  'git.read': row('✓', '▲', '⊘', undefined, 'decided'),
  'git.write': row('✓', '⊘', '⊘', undefined, 'decided'),
  'mission.create': row('✓', '▲', '⊘', undefined, 'decided'),
  'mission.gate': row('✓', '⊘', '⊘', undefined, 'decided'),
  // Issue 12: the asker's own missions; SemiTrusted only when the policy names `own`.
  'mission.list': row('✓', '▲', '⊘', undefined, 'decided'),
  'mission.cancel': row('✓', '▲', '⊘', undefined, 'decided'),
  'mcp.call': row('⊘', '⊘', '⊘', undefined, 'decided'),
  'kernel.data_dir': row('⊘', '⊘', '⊘', undefined, 'decided'),
  // Seed Phase 110 / Chapter Lattice: CEILING_TRUSTED only (graph.write is ours, decided the same).
  'skills.propose': row('✓', '⊘', '⊘', undefined, 'decided'),
  'skills.list': row('✓', '⊘', '⊘', undefined, 'decided'),
  'skills.invoke': row('✓', '⊘', '⊘', undefined, 'decided'),
  'graph.read': row('✓', '⊘', '⊘', undefined, 'decided'),
  'graph.write': row('✓', '⊘', '⊘', undefined, 'decided'),
  // Issue 33 (the seed reserves agent.delegate, D4): Trusted only; a specialist never holds more than its lead.
  'agent.delegate': row('✓', '⊘', '⊘', undefined, 'decided'),
  // The owner's stop of one specialist (no tool asks for it): Trusted only.
  'agent.terminate': row('✓', '⊘', '⊘', undefined, 'decided'),
};

/**
 * Representative calls per tool id: each must be valid input. Qualified requests mostly (that is what
 * every tool asks for); memory.recall also makes a bare request (no filter → all of memory).
 */
const SAMPLES: Readonly<Record<string, readonly unknown[]>> = {
  'fs.read': [{ path: '/home/u/notes.txt' }, { path: '/home/u/shared/notes.txt' }, { path: '/home/u/.ssh/id_rsa' }],
  'fs.write': [
    { path: '/home/u/notes.txt', content: 'x' },
    { path: '/home/u/shared/notes.txt', content: 'x' },
    { path: '/home/u/.ssh/authorized_keys', content: 'x' },
  ],
  'fs.delete': [{ path: '/home/u/old.txt' }, { path: '/home/u/tmp', recursive: true }],
  'fs.metadata': [{ path: '/home/u/notes.txt' }],
  // Attaching is reading: the fs.read row decides (inside the policy's folder, and outside it).
  'fs.attach': [{ path: '/home/u/shared/chart.png' }, { path: '/home/u/.ssh/id_rsa' }],
  'net.fetch': [{ url: 'https://api.example.com/v1/items' }, { url: 'http://127.0.0.1:8080/api', method: 'HEAD' }],
  'net.post': [
    { url: 'https://api.example.com/v1/items', method: 'POST', body: '{}', contentType: 'application/json' },
    { url: 'https://evil.example/collect', method: 'POST' },
  ],
  'shell.exec': [{ argv: ['ls', '-la'] }, { argv: ['git', '-c', 'alias.x=!sh', 'x'] }],
  'memory.write': [
    { text: 'x', session: 's1' },
    { text: 'x', topic: 'notes', public: true },
  ],
  'memory.recall': [{ public: true, topic: 'notes' }, { session: 's1' }, {}],
  'memory.forget': [{ session: 's1' }, { session: 's2' }, { topic: 'work' }],
  'git.status': [{ repo: '/home/u/repo' }, { repo: '/home/u/shared/repo' }],
  'git.diff': [{ repo: '/home/u/repo' }, { repo: '/home/u/shared/repo' }],
  'git.commit': [{ repo: '/home/u/repo', message: 'wip' }],
  'config.read': [{ key: 'llm.model' }],
  'config.write': [{ key: 'llm.model', value: 'x' }],
  'audit.read': [{}, { type: 'ToolCall' }, { allSessions: true }, { allSessions: true, type: 'ToolCall' }],
  'mcp.call': [{ server: 'files', tool: 'list' }],
  'shell.spawn': [{ argv: ['npm', 'test'] }, { argv: ['sleep', '30'], cwd: '/tmp', maxDurationMs: 60_000 }],
  'mission.create': [
    { goal: 'passport', steps: [{ waitUntil: '2027-03-01T09:00', timeZone: 'Europe/Berlin' }, { notify: 'renew the passport' }] },
    { goal: 'weekly', steps: ['summarise what is waiting for me'], capabilities: ['audit.read'] },
  ],
  'mission.list': [{}, { state: 'waiting', limit: 5 }],
  'mission.cancel': [{ missionId: 'mission-0123abcd' }, { missionId: 'mission-0123abcd', reason: 'not needed' }],
  'skills.propose': [
    { name: 'file-receipts', summary: 'File receipts', whenToUse: 'receipts arrive', steps: ['read', 'write'], tools: ['fs.read'] },
  ],
  'skills.list': [{}],
  'skills.invoke': [{ name: 'file-receipts' }],
  'graph.write': [
    { relations: [{ subject: { name: 'Dana', kind: 'person' }, predicate: 'works_on', object: { name: 'Ledger', kind: 'project' } }] },
  ],
  'agent.delegate': [{ specialist: 'researcher', task: 'read a page' }],
  'graph.query': [{ from: 'Dana', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] }],
  'channel.send': [
    { channel: 'telegram', to: '12345', text: 'hi' },
    { channel: 'email', to: 'me@example.com', text: 'hi' },
  ],
  'value.read': [{ from: '{{value:v0123456789ab}}', as: 'boolean', question: 'is it a refund?' }],
};

const AGENT_ALL_BARE = CapabilitySet.from(KNOWN_SCOPE_BASES);

/** What the row says a request `scope` gets under `tier` and `policy`. */
function expected(scope: Scope, tier: Tier, policy: TierPolicy): boolean {
  const r = TABLE[scope.base] as Row;
  const cell = r.cells[tier];
  if (cell === '⊘') return false;
  if (cell === '✓') return true;
  if (scope.qualifier === undefined) return false; // ▲: a bare request is never granted
  // ▲: the row's fixed qualifiers, or (SemiTrusted, configurable base) exactly the policy's.
  const configurable = tier === 'SemiTrusted' && (SEMITRUSTED_POLICY_BASES as readonly string[]).includes(scope.base);
  const allowed = configurable ? (policy.semiTrusted[scope.base as keyof TierPolicy['semiTrusted']] ?? []) : (r.only?.[tier] ?? []);
  expect(allowed.length > 0 || configurable, `▲ row ${scope.base} ${tier} names its qualifiers`).toBe(true);
  return allowed.some((q) => scope.isGrantedBy(Scope.parse(`${scope.base}:${q}`)));
}

function toolScopes(tool: ToolDescriptor): Scope[] {
  return (SAMPLES[tool.id] ?? []).map((input) => Scope.parse(tool.requiredScope(input)));
}

describe('the table', () => {
  it('has a row for every base a catalog tool requests, and only known bases', () => {
    for (const base of Object.keys(TABLE))
      if (!KNOWN_SCOPE_BASES.includes(base)) expect(TABLE[base]?.source, `row ${base} for an unknown base`).toBe('decided');
    for (const base of KNOWN_SCOPE_BASES) expect(TABLE[base], `no row for ${base}`).toBeDefined();
  });

  it('every catalog tool has representative inputs that validate', () => {
    const missing = TOOL_CATALOG.filter((t) => (SAMPLES[t.id] ?? []).length === 0).map((t) => t.id);
    expect(missing, 'add SAMPLES for these tools').toEqual([]);
    for (const t of TOOL_CATALOG) expect(() => toolScopes(t), t.id).not.toThrow();
  });

  // The seed's D5 table is parsed when the seed is checked out beside the repo, so this copy cannot drift.
  const seedDir = join(dirname(fileURLToPath(import.meta.url)), '../../../shared/seed');
  const seedFile = existsSync(seedDir)
    ? readdirSync(seedDir)
        .map((f) => join(seedDir, f))
        .find((f) => f.endsWith('.md') && readFileSync(f, 'utf8').includes('Per-tier ceiling table'))
    : undefined;
  it.skipIf(seedFile === undefined)('matches the seed document row by row', () => {
    const text = readFileSync(seedFile as string, 'utf8');
    const start = text.indexOf('Per-tier ceiling table');
    const rows = [...text.slice(start).matchAll(/^\| `([a-z_.]+)` \| ([^|]+)\| ([^|]+)\| ([^|]+)\|\s*$/gmu)];
    const symbol = (c: string): Cell => (c.trim().startsWith('✓') ? '✓' : c.trim().startsWith('▲') ? '▲' : '⊘');
    const seedRows = new Map(rows.map((m) => [m[1] as string, [symbol(m[2] as string), symbol(m[3] as string), symbol(m[4] as string)]]));
    expect(seedRows.size).toBeGreaterThanOrEqual(19);
    for (const [base, cells] of seedRows) {
      const r = TABLE[base];
      expect(r?.source, base).toBe('seed');
      expect([r?.cells.Trusted, r?.cells.SemiTrusted, r?.cells.Untrusted], base).toEqual(cells);
    }
    expect(
      Object.entries(TABLE)
        .filter(([, r]) => r.source === 'seed')
        .map(([b]) => b)
        .sort(),
    ).toEqual([...seedRows.keys()].sort());
  });
});

describe.each(TOOL_CATALOG.map((t) => [t.id, t] as const))('%s', (_id, tool) => {
  for (const tier of TIERS) {
    for (const [name, policy] of [
      ['no policy', EMPTY_TIER_POLICY],
      ['a policy', POLICY],
    ] as const) {
      it(`${tier}, ${name}: granted/denied as the ceiling table row says`, () => {
        const eff = effectiveCapabilities(AGENT_ALL_BARE, tier, policy);
        const scopes = toolScopes(tool);
        expect(scopes.length).toBeGreaterThan(0);
        for (const scope of scopes)
          expect(eff.grants(scope), `${tier} ${scope.toString()} (row ${scope.base}: ${TABLE[scope.base]?.cells[tier]})`).toBe(
            expected(scope, tier, policy),
          );
      });
    }
  }
});

describe('the ▲ cells are not vacuous', () => {
  it('with the policy, each SemiTrusted ▲ tool sample is granted inside the configured qualifiers and denied outside', () => {
    const eff = effectiveCapabilities(AGENT_ALL_BARE, 'SemiTrusted', POLICY);
    const scope = (id: string, input: unknown): string => (TOOL_CATALOG.find((t) => t.id === id) as ToolDescriptor).requiredScope(input);
    const cases: [string, unknown, boolean][] = [
      ['fs.read', { path: '/home/u/shared/notes.txt' }, true],
      ['fs.read', { path: '/home/u/.ssh/id_rsa' }, false],
      ['fs.write', { path: '/home/u/.ssh/authorized_keys', content: 'ssh-ed25519 AAAA attacker' }, false],
      ['fs.write', { path: '/home/u/shared/x', content: 'x' }, true],
      ['git.status', { repo: '/home/u/shared/repo' }, true],
      ['git.status', { repo: '/home/u/repo' }, false],
      ['net.post', { url: 'https://api.example.com/v1/items', method: 'POST' }, true],
      ['net.post', { url: 'https://evil.example/collect', method: 'POST' }, false],
      ['memory.forget', { session: 's1' }, true],
      ['memory.forget', { session: 's2' }, false],
      ['channel.send', { channel: 'telegram', to: '1', text: 'x' }, true],
      ['channel.send', { channel: 'email', to: 'a@b.c', text: 'x' }, false],
      ['audit.read', {}, true],
      ['mission.list', {}, true],
      ['mission.cancel', { missionId: 'mission-0123abcd' }, true],
      ['audit.read', { allSessions: true }, false],
    ];
    for (const [id, input, granted] of cases) expect(eff.grants(scope(id, input)), `${id} ${JSON.stringify(input)}`).toBe(granted);
    // Without a policy, none of them (but the own-session audit.read) is granted.
    const none = effectiveCapabilities(AGENT_ALL_BARE, 'SemiTrusted');
    for (const [id, input] of cases)
      expect(none.grants(scope(id, input)), `${id} ${JSON.stringify(input)} without a policy`).toBe(
        id === 'audit.read' && !(input as { allSessions?: boolean }).allSessions,
      );
  });
});

describe('the rows say what the new tools may do', () => {
  const effOf = (tier: Tier): CapabilitySet => effectiveCapabilities(AGENT_ALL_BARE, tier, POLICY);
  const byId = (id: string): ToolDescriptor => TOOL_CATALOG.find((t) => t.id === id) as ToolDescriptor;

  it('fs.delete: Trusted only; fs.metadata: Trusted and SemiTrusted', () => {
    const del = byId('fs.delete').requiredScope({ path: '/home/u/x' });
    const meta = byId('fs.metadata').requiredScope({ path: '/home/u/x' });
    expect(TIERS.map((t) => effOf(t).grants(del))).toEqual([true, false, false]);
    expect(TIERS.map((t) => effOf(t).grants(meta))).toEqual([true, true, false]);
  });

  it('net.fetch: Trusted and SemiTrusted; net.post: Trusted, SemiTrusted only to configured URLs; Untrusted neither', () => {
    const f = byId('net.fetch').requiredScope({ url: 'https://api.example.com/v1' });
    const p = byId('net.post').requiredScope({ url: 'https://api.example.com/v1', method: 'POST' });
    expect(TIERS.map((t) => effOf(t).grants(f))).toEqual([true, true, false]);
    expect(TIERS.map((t) => effOf(t).grants(p))).toEqual([true, true, false]);
    // ▲: the SemiTrusted set holds exactly the configured URL, never net.post:* or bare net.post.
    expect(
      effOf('SemiTrusted')
        .toJSON()
        .filter((s) => s.startsWith('net.post')),
    ).toEqual(['net.post:https://api.example.com/v1']);
    expect(effOf('SemiTrusted').grants('net.post:*')).toBe(false);
    expect(effOf('SemiTrusted').grants('net.post')).toBe(false);
  });

  it('shell.exec: an argv that runs its arguments needs the bare grant, so no qualified grant reaches it', () => {
    const s = byId('shell.exec').requiredScope({ argv: ['git', '-c', 'alias.x=!sh', 'x'] });
    expect(s).toBe('shell.exec');
    expect(TIERS.map((t) => effOf(t).grants(s))).toEqual([true, false, false]);
    expect(CapabilitySet.from(['shell.exec:git']).grants(s)).toBe(false);
  });

  it('shell.spawn: Trusted only, under its own base (a shell.exec grant does not cover it)', () => {
    const s = byId('shell.spawn').requiredScope({ argv: ['sleep', '30'] });
    expect(s).toBe('shell.spawn:sleep');
    expect(TIERS.map((t) => effOf(t).grants(s))).toEqual([true, false, false]);
    expect(CapabilitySet.from(['shell.exec:sleep']).grants(s)).toBe(false);
  });

  it('mission.list / mission.cancel: Trusted, SemiTrusted only when the policy names `own`, Untrusted never', () => {
    const list = byId('mission.list').requiredScope({});
    const cancel = byId('mission.cancel').requiredScope({ missionId: 'mission-0123abcd' });
    expect([list, cancel]).toEqual(['mission.list:own', 'mission.cancel:own']);
    for (const s of [list, cancel]) {
      expect(TIERS.map((t) => effOf(t).grants(s))).toEqual([true, true, false]);
      expect(TIERS.map((t) => effectiveCapabilities(AGENT_ALL_BARE, t).grants(s))).toEqual([true, false, false]);
    }
    // Each is its own grant: listing does not let a SemiTrusted person cancel.
    const listOnly: TierPolicy = { semiTrusted: { 'mission.list': ['own'] } };
    expect(effectiveCapabilities(AGENT_ALL_BARE, 'SemiTrusted', listOnly).grants(list)).toBe(true);
    expect(effectiveCapabilities(AGENT_ALL_BARE, 'SemiTrusted', listOnly).grants(cancel)).toBe(false);
  });

  it('channel.send: Trusted, SemiTrusted only on configured channels (▲), Untrusted never', () => {
    const s = byId('channel.send').requiredScope({ channel: 'telegram', to: '1', text: 'x' });
    expect(s).toBe('channel.send:telegram');
    expect(TIERS.map((t) => effOf(t).grants(s))).toEqual([true, true, false]);
    expect(effOf('SemiTrusted').grants('channel.send')).toBe(false);
    expect(effOf('SemiTrusted').grants('channel.send:email')).toBe(false);
    // An agent granted one channel cannot send on another, whatever the policy allows.
    const agent = CapabilitySet.from(['channel.send:email']);
    expect(effectiveCapabilities(agent, 'SemiTrusted', POLICY).grants('channel.send:email')).toBe(false);
    expect(effectiveCapabilities(agent, 'SemiTrusted', POLICY).grants(s)).toBe(false);
    expect(effectiveCapabilities(CapabilitySet.from(['channel.send:telegram']), 'SemiTrusted', POLICY).grants(s)).toBe(true);
  });
});
