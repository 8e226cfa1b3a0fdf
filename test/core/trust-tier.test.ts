import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import {
  CapabilitySet,
  KNOWN_SCOPE_BASES,
  TIER_EXTRA_AUDIT,
  TRUST_TIERS,
  channelTrustTier,
  effectiveCapabilities,
  isMoreTrustedThan,
  tierCeiling,
  type TrustTier,
} from '../../core/capability/index.js';

/**
 * A sample qualified request per base (the kind of call a narrow tool makes), used to tell
 * ✓ (bare granted) from ▲ (only qualified granted) from ⊘ (neither).
 */
const SAMPLE_QUALIFIED: Record<string, string> = {
  'fs.read': 'fs.read:/home/u/notes.txt',
  'fs.write': 'fs.write:/home/u/notes.txt',
  'fs.delete': 'fs.delete:/home/u/notes.txt',
  'fs.metadata': 'fs.metadata:/home/u/notes.txt',
  'net.fetch': 'net.fetch:https://api.example.com/v1/items',
  'net.post': 'net.post:https://api.example.com/v1/items',
  'net.dns': 'net.dns:api.example.com',
  'shell.exec': 'shell.exec:ls',
  'shell.spawn': 'shell.spawn:ls',
  'llm.call': 'llm.call:gpt-4',
  'llm.embed': 'llm.embed:text-embed-3',
  'memory.read': 'memory.read:scope:public:notes',
  'memory.write': 'memory.write:session:1',
  'memory.forget': 'memory.forget:session:1',
  'channel.send': 'channel.send:telegram',
  'channel.receive': 'channel.receive:telegram',
  'audit.read': 'audit.read:public',
  'config.read': 'config.read:llm.model',
  'config.write': 'config.write:llm.model',
  'git.read': 'git.read:/home/u/repo',
  'git.write': 'git.write:/home/u/repo',
  'mission.create': 'mission.create:daily',
  'mission.gate': 'mission.gate:daily',
  'mcp.call': 'mcp.call:echo/echo',
};

type Cell = '✓' | '▲' | '⊘';

/** The seed's per-tier ceiling table, row by row, plus the git/mission rows decided in trust-tier.ts. */
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
  ['mcp.call', '⊘', '⊘', '⊘'], // amendment 2026-12-02-mcp-call-scope: no tier by default
];

const COLUMNS: readonly Exclude<TrustTier, 'Kernel'>[] = ['Trusted', 'SemiTrusted', 'Untrusted'];

describe('ceiling table', () => {
  it('covers every known base exactly once', () => {
    expect(TABLE.map((r) => r[0]).sort()).toEqual([...KNOWN_SCOPE_BASES].sort());
  });

  for (const [base, ...cells] of TABLE) {
    for (const [col, tier] of COLUMNS.entries()) {
      const cell = cells[col] as Cell;
      it(`${tier} ${base}: ${cell}`, () => {
        const ceiling = tierCeiling(tier);
        const qualified = SAMPLE_QUALIFIED[base] as string;
        expect(ceiling.grants(base)).toBe(cell === '✓');
        expect(ceiling.grants(qualified)).toBe(cell !== '⊘');
        // An agent holding the bare base gets, under this tier, exactly what the cell says.
        const eff = effectiveCapabilities(CapabilitySet.from([base]), tier);
        expect(eff.grants(base)).toBe(cell === '✓');
        expect(eff.grants(qualified)).toBe(cell !== '⊘');
      });
    }
  }

  it('Untrusted ▲ cells are the seed\'s exact qualifiers', () => {
    const u = tierCeiling('Untrusted');
    expect(u.toJSON()).toEqual(['audit.read:public', 'memory.read:scope:public:*']);
    expect(u.grants('memory.read:scope:private:x')).toBe(false);
    expect(u.grants('memory.read:session:1')).toBe(false);
    expect(u.grants('audit.read:ScopeDenied')).toBe(false);
  });

  it('SemiTrusted ▲ accepts any narrowly-qualified request of the base', () => {
    const s = tierCeiling('SemiTrusted');
    expect(s.grants('fs.write:/tmp/x')).toBe(true);
    expect(s.grants('net.post:http://localhost:8080/hook')).toBe(true);
    expect(s.grants('channel.send:slack:*')).toBe(true);
    expect(s.grants('net.post:*')).toBe(true);
  });

  it('Kernel is unlimited: every known base bare', () => {
    const k = tierCeiling('Kernel');
    expect(k.size).toBe(KNOWN_SCOPE_BASES.length);
    for (const b of KNOWN_SCOPE_BASES) expect(k.grants(b)).toBe(true);
  });

  it('each tier ceiling lies within the next more trusted one', () => {
    for (let i = 0; i + 1 < TRUST_TIERS.length; i++) {
      expect(tierCeiling(TRUST_TIERS[i] as TrustTier).isSubsetOf(tierCeiling(TRUST_TIERS[i + 1] as TrustTier))).toBe(true);
    }
    expect(tierCeiling('Trusted').isSubsetOf(tierCeiling('SemiTrusted'))).toBe(false);
  });

  it('marks fs.delete, shell.exec and shell.spawn for extra audit', () => {
    expect([...TIER_EXTRA_AUDIT].sort()).toEqual(['fs.delete', 'shell.exec', 'shell.spawn']);
  });
});

describe('effective capabilities', () => {
  it('keeps an agent\'s narrower grants and caps its broad ones', () => {
    const agent = CapabilitySet.from(['fs.read', 'fs.write:/home/u/**', 'shell.exec:git', 'memory.read:session:*']);
    expect(effectiveCapabilities(agent, 'SemiTrusted').toJSON()).toEqual(['fs.read:/**', 'fs.write:/home/u/**', 'memory.read:session:*']);
    expect(effectiveCapabilities(agent, 'Untrusted').toJSON()).toEqual([]);
    expect(effectiveCapabilities(agent, 'Trusted').toJSON()).toEqual(agent.toJSON());
  });

  it('"run rm -rf from Telegram" is denied at SemiTrusted', () => {
    const eff = effectiveCapabilities(CapabilitySet.from(['shell.exec']), channelTrustTier('SemiTrusted'));
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
