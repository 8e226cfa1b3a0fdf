/**
 * Property tests (fast-check) over small generated universes per qualifier kind, chosen so
 * that random scopes often relate (share prefixes, hosts, commands) and the properties are
 * not vacuously true; each universe test also counts that relations actually occurred.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapabilitySet, Scope, TRUST_TIERS, effectiveCapabilities, tierCeiling } from '../../core/capability/index.js';

const pathQ = fc
  .array(fc.constantFrom('a', 'b', 'x.txt', '*', '**', '?', 'a*', '*.txt'), { maxLength: 4 })
  .map((segs) => '/' + segs.join('/'));
const urlQ = fc.oneof(
  { weight: 1, arbitrary: fc.constant('*') },
  {
    weight: 6,
    arbitrary: fc
      .record({
        scheme: fc.constantFrom('http', 'https'),
        host: fc.constantFrom('a.com', 'b.a.com', 'A.COM.'),
        port: fc.constantFrom('', ':8443', ':443'),
        segs: fc.array(fc.constantFrom('v1', 'v10', 'x', '.', '..'), { maxLength: 3 }),
        slash: fc.boolean(),
        query: fc.constantFrom(undefined, 'q=1', 'q=2'),
      })
      .map(({ scheme, host, port, segs, slash, query }) => {
        // '..' past the root is refused by parse; keep generated URLs parseable.
        const depth = segs.reduce((d, s) => (d < 0 ? d : s === '..' ? d - 1 : s === '.' ? d : d + 1), 0);
        const path = depth < 0 ? '' : '/' + segs.join('/') + (slash && segs.length > 0 ? '/' : '');
        return `${scheme}://${host}${port}${path}${query === undefined ? '' : `?${query}`}`;
      }),
  },
);
const domainQ = fc.oneof(
  fc.constant('*'),
  fc.tuple(fc.boolean(), fc.constantFrom('com', 'a.com', 'b.a.com', 'c.b.a.com', 'evila.com')).map(([w, h]) => (w ? `*.${h}` : h)),
);
const allowQ = fc.subarray(['ls', 'git', 'rm', 'cat'], { minLength: 1 }).map((xs) => xs.join(','));
const globQ = fc.array(fc.constantFrom('a', 'b', ':', '*', '?'), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''));

const KIND_UNIVERSE: ReadonlyArray<[base: string, q: fc.Arbitrary<string>]> = [
  ['fs.read', pathQ],
  ['net.post', urlQ],
  ['net.dns', domainQ],
  ['shell.exec', allowQ],
  ['memory.read', globQ],
];

/** A scope of `base`: bare one time in six, else qualified from the kind's universe. */
function scopeOf(base: string, q: fc.Arbitrary<string>): fc.Arbitrary<Scope> {
  return fc
    .oneof({ weight: 1, arbitrary: fc.constant(base) }, { weight: 5, arbitrary: q.map((x) => `${base}:${x}`) })
    .map((s) => Scope.parse(s));
}

const anyScope: fc.Arbitrary<Scope> = fc.oneof(
  ...KIND_UNIVERSE.map(([b, q]) => scopeOf(b, q)),
  scopeOf('fs.write', pathQ),
  scopeOf('audit.read', globQ),
  scopeOf('llm.call', globQ),
);
const anySet: fc.Arbitrary<CapabilitySet> = fc.array(anyScope, { maxLength: 8 }).map((xs) => CapabilitySet.from(xs));
const tier = fc.constantFrom(...TRUST_TIERS);

describe('capability properties', () => {
  it('intersect never broadens either side', () => {
    let granted = 0;
    fc.assert(
      fc.property(anySet, anySet, fc.array(anyScope, { minLength: 1, maxLength: 10 }), (a, b, probes) => {
        const i = a.intersect(b);
        // Probe with both inputs' own scopes too, so grants through the intersection are common.
        for (const s of [...probes, ...a.scopes, ...b.scopes]) {
          if (i.grants(s)) {
            granted++;
            expect(a.grants(s)).toBe(true);
            expect(b.grants(s)).toBe(true);
          }
        }
      }),
      { numRuns: 500 },
    );
    expect(granted).toBeGreaterThan(100);
  });

  it('intersect is symmetric in what it grants', () => {
    fc.assert(
      fc.property(anySet, anySet, fc.array(anyScope, { minLength: 1, maxLength: 10 }), (a, b, probes) => {
        for (const s of probes) expect(a.intersect(b).grants(s)).toBe(b.intersect(a).grants(s));
      }),
      { numRuns: 300 },
    );
  });

  for (const [base, q] of KIND_UNIVERSE) {
    it(`attenuation is reflexive and transitive (${base})`, () => {
      let chains = 0;
      fc.assert(
        fc.property(fc.array(scopeOf(base, q), { minLength: 3, maxLength: 8 }), (xs) => {
          for (const a of xs) {
            expect(a.isGrantedBy(a)).toBe(true);
            for (const b of xs) {
              if (a === b || !a.isGrantedBy(b)) continue;
              for (const c of xs) {
                if (b === c || !b.isGrantedBy(c)) continue;
                chains++;
                expect(a.isGrantedBy(c)).toBe(true);
              }
            }
          }
        }),
        { numRuns: 300 },
      );
      expect(chains).toBeGreaterThan(20);
    });

    it(`canonical form is a fixed point (${base})`, () => {
      fc.assert(
        fc.property(scopeOf(base, q), (s) => {
          expect(Scope.parse(s.toString()).toString()).toBe(s.toString());
        }),
      );
    });
  }

  it('effective = agent ∩ ceiling never exceeds the ceiling or the agent', () => {
    fc.assert(
      fc.property(anySet, tier, fc.array(anyScope, { minLength: 1, maxLength: 10 }), (agent, t, probes) => {
        const eff = effectiveCapabilities(agent, t);
        expect(eff.isSubsetOf(tierCeiling(t))).toBe(true);
        expect(eff.isSubsetOf(agent)).toBe(true);
        for (const s of probes) if (eff.grants(s)) expect(tierCeiling(t).grants(s) && agent.grants(s)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('no ceiling below Trusted grants a bare ▲ base', () => {
    fc.assert(
      fc.property(anySet, (agent) => {
        const eff = effectiveCapabilities(agent, 'SemiTrusted');
        for (const b of ['fs.read', 'fs.write', 'net.post', 'memory.forget', 'channel.send', 'channel.receive', 'audit.read'])
          expect(eff.grants(b)).toBe(false);
      }),
    );
  });

  it('CapabilitySet is deterministic: order and duplicates do not change toJSON', () => {
    fc.assert(
      fc.property(fc.array(anyScope, { maxLength: 12 }), fc.array(fc.nat()), (xs, keys) => {
        const shuffled = xs
          .map((s, i) => ({ s, k: keys[i % Math.max(1, keys.length)] ?? i }))
          .sort((p, q) => p.k - q.k)
          .map((p) => p.s.toString());
        const a = CapabilitySet.from(xs);
        const b = CapabilitySet.from([...shuffled, ...shuffled.slice(0, 3)]);
        expect(b.toJSON()).toEqual(a.toJSON());
        expect(CapabilitySet.fromJSON(a.toJSON()).toJSON()).toEqual(a.toJSON());
        expect([...a.toJSON()].sort()).toEqual(a.toJSON());
      }),
    );
  });

  it('a needed path glob granted by a held scope has every concrete instance granted too', () => {
    let cases = 0;
    fc.assert(
      fc.property(
        scopeOf('fs.read', pathQ),
        scopeOf('fs.read', pathQ),
        fc.array(fc.constantFrom('a', 'b', 'zz', 'x.txt'), { maxLength: 3 }),
        (n, h, fill) => {
          if (n.qualifier === undefined || !/[*?]/.test(n.qualifier) || !n.isGrantedBy(h)) return;
          cases++;
          // Instantiate: '**' → the fill segments, '*' → 'zz', '?' → 'q'.
          const concrete = n.qualifier
            .split('/')
            .flatMap((seg) => (seg === '**' ? fill : [seg.replace(/\*/g, 'zz').replace(/\?/g, 'q')]))
            .join('/');
          expect(Scope.parse(`fs.read:${concrete === '' ? '/' : concrete}`).isGrantedBy(h)).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
    expect(cases).toBeGreaterThan(20);
  });
});
