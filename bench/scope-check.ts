/** Scope-check throughput: the check every tool call passes twice (workflow and activity). */
import { CapabilitySet, Scope, effectiveCapabilities } from '../core/capability/index.js';

/** Markdown lines: checks/s over a realistic SemiTrusted effective set and a mix of granted and denied scopes. */
export function benchScopeCheck(): string[] {
  const agent = CapabilitySet.from([
    'fs.read',
    'fs.write',
    'fs.metadata',
    'shell.exec',
    'net.fetch',
    'net.post:https://api.example.com/v1',
    'memory.read',
    'memory.write',
    'git.read',
  ]);
  // An operator policy like AIVYX_SEMITRUSTED_FS=~/** would give (the default, the workspace only, checks fewer paths).
  const policy = {
    semiTrusted: {
      'fs.read': ['/home/me/**'],
      'fs.write': ['/home/me/notes/**'],
      'git.read': ['/home/me/src/**'],
      'net.post': ['https://api.example.com/v1'],
    },
  };
  const effective = effectiveCapabilities(agent, 'SemiTrusted', policy);
  const needed = [
    'fs.read:/home/me/notes/today.md',
    'fs.write:/home/me/notes/draft.txt',
    'net.fetch:https://example.org/page',
    'net.post:https://api.example.com/v1/items',
    'net.post:https://api.example.com.evil.com/v1',
    'shell.exec:rm',
    'memory.read:session:cli-1',
    'git.read:/home/me/src/aivyx',
  ].map((s) => Scope.parse(s));
  const n = 2_000_000;
  let granted = 0;
  // Warm up the JIT before timing.
  for (let i = 0; i < 200_000; i++) if (effective.grants(needed[i % needed.length]!)) granted++;
  granted = 0;
  const t = performance.now();
  for (let i = 0; i < n; i++) if (effective.grants(needed[i % needed.length]!)) granted++;
  const rate = n / ((performance.now() - t) / 1000);
  return [
    '## Scope checks',
    '',
    '| measure | value |',
    '|---|---|',
    `| \`CapabilitySet.grants\` on parsed scopes (SemiTrusted effective set of ${effective.size} scopes, ${needed.length}-scope mix, ${Math.round((granted / n) * 100)}% granted) | ${Math.round(rate).toLocaleString('en-US')} checks/s (target ≥ 1,000,000) |`,
  ];
}
