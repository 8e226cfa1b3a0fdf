import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import {
  ANY_QUALIFIER,
  CapabilitySet,
  EMPTY_TIER_POLICY,
  KERNEL_ONLY_BASES,
  KNOWN_SCOPE_BASES,
  SEMITRUSTED_POLICY_BASES,
  TIER_EXTRA_AUDIT,
  TRUST_TIERS,
  channelTrustTier,
  effectiveCapabilities,
  isMoreTrustedThan,
  qualifierKindOf,
  tierCeiling,
  validateTierPolicy,
  type TierPolicy,
  type TrustTier,
} from '../../core/capability/index.js';

/**
 * A sample qualified request per base (the kind of call a narrow tool makes), used to tell
 * ✓ (bare granted) from ▲ (only configured qualifiers granted) from ⊘ (neither). For ▲ cells the
 * sample lies OUTSIDE what is configured, and {@link INSIDE} gives one inside.
 */
const SAMPLE_QUALIFIED: Record<string, string> = {
  'fs.read': 'fs.read:/home/u/.ssh/id_rsa',
  'fs.write': 'fs.write:/home/u/.ssh/authorized_keys',
  'fs.delete': 'fs.delete:/home/u/notes.txt',
  'fs.metadata': 'fs.metadata:/home/u/notes.txt',
  'net.fetch': 'net.fetch:https://api.example.com/v1/items',
  'net.post': 'net.post:https://evil.example/collect',
  'net.dns': 'net.dns:api.example.com',
  'shell.exec': 'shell.exec:ls',
  'shell.spawn': 'shell.spawn:ls',
  'llm.call': 'llm.call:gpt-4',
  'llm.embed': 'llm.embed:text-embed-3',
  'memory.read': 'memory.read:session:1',
  'memory.write': 'memory.write:session:1',
  'memory.forget': 'memory.forget:topic:work',
  'channel.send': 'channel.send:email',
  'channel.receive': 'channel.receive:email',
  'audit.read': 'audit.read:ToolCall',
  'config.read': 'config.read:llm.model',
  'config.write': 'config.write:llm.model',
  'git.read': 'git.read:/home/u/secret-repo',
  'git.write': 'git.write:/home/u/repo',
  'mission.create': 'mission.create:daily',
  'mission.list': 'mission.list:own',
  'mission.cancel': 'mission.cancel:own',
  'skills.propose': 'skills.propose:any',
  'skills.list': 'skills.list:any',
  'skills.invoke': 'skills.invoke:any',
  'graph.read': 'graph.read:any',
  'graph.write': 'graph.write:any',
  'agent.delegate': 'agent.delegate:researcher',
  'agent.terminate': 'agent.terminate:researcher',
  'mission.gate': 'mission.gate:daily',
  'mcp.call': 'mcp.call:echo/echo',
  'kernel.data_dir': 'kernel.data_dir:/home/u/.aivyx/rest-token',
};

/** The operator policy these tests configure (what AIVYX_SEMITRUSTED_* would produce). */
const POLICY: TierPolicy = {
  semiTrusted: {
    'fs.read': ['/home/u/shared/**'],
    'fs.write': ['/home/u/shared/**'],
    'git.read': ['/home/u/shared/**'],
    'net.post': ['https://hooks.example.com/aivyx'],
    'memory.forget': ['session:*'],
    'channel.send': ['telegram'],
    'channel.receive': ['telegram'],
  },
};

/** For each ▲ cell (tier → base): a request inside what is configured or named. */
const INSIDE: Record<'SemiTrusted' | 'Untrusted', Record<string, string>> = {
  SemiTrusted: {
    'fs.read': 'fs.read:/home/u/shared/notes.txt',
    'fs.write': 'fs.write:/home/u/shared/notes.txt',
    'git.read': 'git.read:/home/u/shared/repo',
    'net.post': 'net.post:https://hooks.example.com/aivyx/1',
    'memory.forget': 'memory.forget:session:1',
    'channel.send': 'channel.send:telegram',
    'channel.receive': 'channel.receive:telegram',
    'audit.read': 'audit.read:own-session',
  },
  Untrusted: {
    'memory.read': 'memory.read:scope:public:notes',
    'audit.read': 'audit.read:public',
  },
};

type Cell = '✓' | '▲' | '⊘';

/** The seed's per-tier ceiling table, row by row, plus the rows decided in trust-tier.ts and the amendments. */
const TABLE: ReadonlyArray<[string, Cell, Cell, Cell]> = [
  // scope            Trusted SemiTrusted Untrusted
  ['fs.read', '✓', '▲', '⊘'],
  ['fs.write', '✓', '▲', '⊘'],
  ['fs.delete', '✓', '⊘', '⊘'],
  ['fs.metadata', '✓', '✓', '⊘'],
  ['net.fetch', '✓', '✓', '⊘'],
  ['net.post', '✓', '▲', '⊘'],
  ['net.dns', '✓', '✓', '⊘'],
  ['shell.exec', '✓', '⊘', '⊘'],
  ['shell.spawn', '✓', '⊘', '⊘'],
  ['llm.call', '✓', '✓', '⊘'],
  ['llm.embed', '✓', '✓', '⊘'],
  ['memory.read', '✓', '✓', '▲'],
  ['memory.write', '✓', '✓', '⊘'],
  ['memory.forget', '✓', '▲', '⊘'],
  ['channel.send', '✓', '▲', '⊘'],
  ['channel.receive', '✓', '▲', '⊘'],
  ['audit.read', '✓', '▲', '▲'],
  ['config.read', '✓', '✓', '⊘'],
  ['config.write', '✓', '⊘', '⊘'],
  ['git.read', '✓', '▲', '⊘'],
  ['git.write', '✓', '⊘', '⊘'],
  ['mission.create', '✓', '⊘', '⊘'],
  ['mission.gate', '✓', '⊘', '⊘'],
  // Issue 12: SemiTrusted only as the policy names `own` (this file's policy names none; tier-table-tools.test.ts checks one that does).
  ['mission.list', '✓', '⊘', '⊘'],
  ['mission.cancel', '✓', '⊘', '⊘'],
  ['mcp.call', '⊘', '⊘', '⊘'], // amendment 2026-12-02-mcp-call-scope: no tier by default
  ['kernel.data_dir', '⊘', '⊘', '⊘'], // amendment 2026-12-03-tier-policy-data-dir: Kernel only
  // Seed Phase 110 / Chapter Lattice: CEILING_TRUSTED only (graph.write decided the same, issue 35).
  ['skills.propose', '✓', '⊘', '⊘'],
  ['skills.list', '✓', '⊘', '⊘'],
  ['skills.invoke', '✓', '⊘', '⊘'],
  ['graph.read', '✓', '⊘', '⊘'],
  ['graph.write', '✓', '⊘', '⊘'],
  // Issue 33 (the seed reserves agent.delegate, D4): Trusted only.
  ['agent.delegate', '✓', '⊘', '⊘'],
  // The owner's stop of one specialist (issue 33): Trusted only.
  ['agent.terminate', '✓', '⊘', '⊘'],
];

const COLUMNS: readonly Exclude<TrustTier, 'Kernel'>[] = ['Trusted', 'SemiTrusted', 'Untrusted'];

describe('ceiling table (▲ = operator-configured qualifiers only)', () => {
  it('covers every known base exactly once', () => {
    expect(TABLE.map((r) => r[0]).sort()).toEqual([...KNOWN_SCOPE_BASES].sort());
  });

  for (const [base, ...cells] of TABLE) {
    for (const [col, tier] of COLUMNS.entries()) {
      const cell = cells[col] as Cell;
      it(`${tier} ${base}: ${cell}`, () => {
        const outside = SAMPLE_QUALIFIED[base] as string;
        const inside = cell === '▲' ? (INSIDE[tier as 'SemiTrusted' | 'Untrusted'][base] as string) : outside;
        const configurable = tier === 'SemiTrusted' && (SEMITRUSTED_POLICY_BASES as readonly string[]).includes(base);
        for (const policy of [EMPTY_TIER_POLICY, POLICY]) {
          const ceiling = tierCeiling(tier, policy);
          const agent = effectiveCapabilities(CapabilitySet.from([base]), tier, policy);
          for (const set of [ceiling, agent]) {
            expect(set.grants(base), `${base} bare`).toBe(cell === '✓');
            expect(set.grants(outside), outside).toBe(cell === '✓');
            // ▲: only what is configured (nothing without a policy) or named by the seed.
            const insideGranted = cell === '✓' || (cell === '▲' && (!configurable || policy === POLICY));
            expect(set.grants(inside), inside).toBe(insideGranted);
          }
        }
      });
    }
  }

  it('a ▲ entry never becomes "everything": no any-qualifier in any ceiling below Kernel', () => {
    for (const tier of COLUMNS) {
      for (const base of KNOWN_SCOPE_BASES) {
        const any = ANY_QUALIFIER[qualifierKindOf(base)];
        if (any === undefined) continue;
        const cell = TABLE.find((r) => r[0] === base)?.[COLUMNS.indexOf(tier) + 1];
        expect(tierCeiling(tier, POLICY).grants(`${base}:${any}`), `${tier} ${base}:${any}`).toBe(cell === '✓');
      }
    }
  });

  it('the policy refuses "everything" qualifiers, bad qualifiers and bases that are not ▲', () => {
    const refused = (semiTrusted: Record<string, string[]>): AivyxError => {
      try {
        validateTierPolicy({ semiTrusted } as TierPolicy);
      } catch (e) {
        expect(e).toBeInstanceOf(AivyxError);
        return e as AivyxError;
      }
      throw new Error('accepted');
    };
    expect(refused({ 'fs.read': ['/**'] }).message).toMatch(/all of fs\.read/);
    expect(refused({ 'net.post': ['*'] }).message).toMatch(/all of net\.post/);
    expect(refused({ 'channel.send': ['*'] }).message).toMatch(/all of channel\.send/);
    expect(refused({ 'fs.write': ['relative/**'] }).kind).toBe('InvalidScope');
    expect(refused({ 'shell.exec': ['ls'] }).message).toMatch(/not a SemiTrusted ▲ base/);
    expect(refused({ 'audit.read': ['*'] }).message).toMatch(/not a SemiTrusted ▲ base/);
    expect(() => tierCeiling('SemiTrusted', { semiTrusted: { 'fs.read': ['/**'] } })).toThrow(AivyxError);
  });

  it("Untrusted ▲ cells are the seed's exact qualifiers; SemiTrusted audit.read is its own session", () => {
    const u = tierCeiling('Untrusted', POLICY);
    expect(u.toJSON()).toEqual(['audit.read:public', 'memory.read:scope:public:*']);
    expect(u.grants('memory.read:scope:private:x')).toBe(false);
    expect(u.grants('audit.read:ScopeDenied')).toBe(false);
    expect(u.grants('audit.read:own-session')).toBe(false);
    const s = tierCeiling('SemiTrusted', POLICY);
    expect(s.grants('audit.read:own-session')).toBe(true);
    for (const other of ['audit.read:*', 'audit.read:ToolCall', 'audit.read:TurnStarted']) expect(s.grants(other), other).toBe(false);
  });

  it('the SemiTrusted ceiling is the fixed entries plus exactly the configured ones', () => {
    expect(tierCeiling('SemiTrusted').toJSON()).toEqual([
      'audit.read:own-session',
      'audit.read:public',
      'config.read',
      'fs.metadata',
      'llm.call',
      'llm.embed',
      'memory.read',
      'memory.write',
      'net.dns',
      'net.fetch',
    ]);
    const configured = tierCeiling('SemiTrusted', POLICY)
      .toJSON()
      .filter((s) => !tierCeiling('SemiTrusted').toJSON().includes(s));
    expect(configured).toEqual([
      'channel.receive:telegram',
      'channel.send:telegram',
      'fs.read:/home/u/shared/**',
      'fs.write:/home/u/shared/**',
      'git.read:/home/u/shared/**',
      'memory.forget:session:*',
      'net.post:https://hooks.example.com/aivyx',
    ]);
  });

  it('Kernel is unlimited: every known base bare; the data directory is Kernel-only', () => {
    const k = tierCeiling('Kernel');
    expect(k.size).toBe(KNOWN_SCOPE_BASES.length);
    for (const b of KNOWN_SCOPE_BASES) expect(k.grants(b)).toBe(true);
    expect([...KERNEL_ONLY_BASES]).toEqual(['kernel.data_dir']);
    const all = CapabilitySet.from(KNOWN_SCOPE_BASES);
    for (const tier of COLUMNS)
      expect(effectiveCapabilities(all, tier, POLICY).grants('kernel.data_dir:/home/u/.aivyx/rest-token'), tier).toBe(false);
  });

  it('each tier ceiling lies within the next more trusted one', () => {
    for (const policy of [EMPTY_TIER_POLICY, POLICY]) {
      for (let i = 0; i + 1 < TRUST_TIERS.length; i++) {
        expect(tierCeiling(TRUST_TIERS[i] as TrustTier, policy).isSubsetOf(tierCeiling(TRUST_TIERS[i + 1] as TrustTier, policy))).toBe(
          true,
        );
      }
    }
    expect(tierCeiling('Trusted').isSubsetOf(tierCeiling('SemiTrusted', POLICY))).toBe(false);
  });

  it('marks fs.delete, shell.exec and shell.spawn for extra audit', () => {
    expect([...TIER_EXTRA_AUDIT].sort()).toEqual(['fs.delete', 'shell.exec', 'shell.spawn']);
  });
});

describe('effective capabilities', () => {
  it("keeps an agent's narrower grants and caps its broad ones to the configured qualifiers", () => {
    const agent = CapabilitySet.from(['fs.read', 'fs.write:/home/u/**', 'shell.exec:git', 'memory.read:session:*']);
    expect(effectiveCapabilities(agent, 'SemiTrusted', POLICY).toJSON()).toEqual([
      'fs.read:/home/u/shared/**',
      'fs.write:/home/u/shared/**',
      'memory.read:session:*',
    ]);
    expect(effectiveCapabilities(agent, 'SemiTrusted').toJSON()).toEqual(['memory.read:session:*']);
    expect(effectiveCapabilities(agent, 'Untrusted', POLICY).toJSON()).toEqual([]);
    expect(effectiveCapabilities(agent, 'Trusted', POLICY).toJSON()).toEqual(agent.toJSON());
  });

  it('"read ~/.ssh/id_rsa / write authorized_keys from Telegram" is denied at SemiTrusted', () => {
    const eff = effectiveCapabilities(CapabilitySet.from(['fs.read', 'fs.write']), channelTrustTier('SemiTrusted'), POLICY);
    expect(eff.grants('fs.read:/home/u/.ssh/id_rsa')).toBe(false);
    expect(eff.grants('fs.write:/home/u/.ssh/authorized_keys')).toBe(false);
    expect(eff.grants('fs.read:/home/u/shared/../.ssh/id_rsa')).toBe(false);
  });

  it('"run rm -rf from Telegram" is denied at SemiTrusted', () => {
    const eff = effectiveCapabilities(CapabilitySet.from(['shell.exec']), channelTrustTier('SemiTrusted'), POLICY);
    expect(eff.grants('shell.exec:rm')).toBe(false);
  });
});

describe('tiers', () => {
  it('orders tiers by ascending trust', () => {
    expect(TRUST_TIERS).toEqual(['Untrusted', 'SemiTrusted', 'Trusted', 'Kernel']);
    expect(isMoreTrustedThan('Kernel', 'Trusted')).toBe(true);
    expect(isMoreTrustedThan('Trusted', 'SemiTrusted')).toBe(true);
    expect(isMoreTrustedThan('SemiTrusted', 'Untrusted')).toBe(true);
    expect(isMoreTrustedThan('Untrusted', 'SemiTrusted')).toBe(false);
    expect(isMoreTrustedThan('Trusted', 'Trusted')).toBe(false);
  });

  it('channelTrustTier accepts the three channel tiers', () => {
    for (const t of ['Trusted', 'SemiTrusted', 'Untrusted'] as const) expect(channelTrustTier(t)).toBe(t);
  });

  it('channelTrustTier refuses Kernel with CapabilityDenied and unknown names with Config', () => {
    const kindOf = (name: string): string | undefined => {
      try {
        channelTrustTier(name);
        return undefined;
      } catch (e) {
        expect(e).toBeInstanceOf(AivyxError);
        return (e as AivyxError).kind;
      }
    };
    expect(kindOf('Kernel')).toBe('CapabilityDenied');
    expect(kindOf('trusted')).toBe('Config');
    expect(kindOf('Root')).toBe('Config');
    expect(kindOf('')).toBe('Config');
  });
});
